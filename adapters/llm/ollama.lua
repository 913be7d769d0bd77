-- Ollama native chat API (POST {baseUrl}/api/chat, baseUrl like http://localhost:11434).
-- Tool-call arguments are JSON objects (not strings). Ollama tool messages name the tool, not the
-- call id, so the name is looked up from the assistant message that made the call.
-- Streaming is NDJSON: every line is a whole JSON object; the last has done = true.

framing = "ndjson"

local present = json.present

function transform_request(req, source)
  local names_by_id = {}
  local messages = json.array()
  for _, m in ipairs(req.messages) do
    local out = { role = m.role, content = m.content }
    if m.role == "assistant" and m.toolCalls and #m.toolCalls > 0 then
      local calls = json.array()
      for _, c in ipairs(m.toolCalls) do
        names_by_id[c.id] = c.name
        calls[#calls + 1] = { ["function"] = { name = c.name, arguments = json.object(c.arguments) } }
      end
      out.tool_calls = calls
    elseif m.role == "tool" then
      out.tool_name = names_by_id[m.toolCallId]
    end
    messages[#messages + 1] = out
  end
  local body = { model = req.model, messages = messages, stream = req.stream }
  if req.tools and #req.tools > 0 then
    local tools = json.array()
    for _, t in ipairs(req.tools) do
      tools[#tools + 1] = { type = "function", ["function"] = { name = t.name, description = t.description, parameters = t.parameters } }
    end
    body.tools = tools
  end
  local options = {}
  local any_option = false
  if req.maxTokens then options.num_predict = req.maxTokens; any_option = true end
  if req.temperature then options.temperature = req.temperature; any_option = true end
  if any_option then body.options = options end
  return { path = "/api/chat", body = body }
end

function headers(config)
  return bearer(config, { ["Content-Type"] = "application/json" })
end

local function tool_calls_of(msg, first_index)
  local calls = json.array()
  for i, c in ipairs(present(msg and msg.tool_calls) or {}) do
    local fn = c["function"]
    calls[#calls + 1] = {
      id = present(c.id) or ("call_" .. (first_index + i - 1)),
      name = fn.name,
      arguments = json.object(present(fn.arguments) or {}),
    }
  end
  return calls
end

local function finish_reason(done_reason, has_calls)
  if has_calls then return "tool_calls" end
  if present(done_reason) == "length" then return "length" end
  return "stop"
end

local function usage_of(resp)
  if present(resp.prompt_eval_count) == nil and present(resp.eval_count) == nil then return nil end
  return { inputTokens = present(resp.prompt_eval_count) or 0, outputTokens = present(resp.eval_count) or 0 }
end

function transform_response(resp)
  if present(resp.error) then error("provider error: " .. tostring(resp.error)) end
  local msg = present(resp.message) or {}
  local calls = tool_calls_of(msg, 0)
  return {
    text = present(msg.content) or "",
    toolCalls = calls,
    finishReason = finish_reason(resp.done_reason, #calls > 0),
    usage = usage_of(resp),
  }
end

function transform_stream_chunk(line)
  if line:match("^%s*$") then return nil end
  local data = json.decode(line)
  if present(data.error) then
    return { error = tostring(data.error), finishReason = "error", done = true }
  end
  local out = {}
  local msg = present(data.message)
  if msg then
    local text = present(msg.content)
    if text and text ~= "" then out.text = text end
    -- Whole calls per line and no index: each starts a new call in the accumulator.
    local deltas = json.array()
    for _, c in ipairs(present(msg.tool_calls) or {}) do
      local fn = c["function"]
      deltas[#deltas + 1] = { id = present(c.id), name = fn.name, argumentsFragment = json.encode(json.object(present(fn.arguments) or {})) }
    end
    if #deltas > 0 then out.toolCalls = deltas end
  end
  if data.done == true then
    out.done = true
    out.usage = usage_of(data)
    local reason = present(data.done_reason)
    if reason == "length" then out.finishReason = "length" end -- else: tool_calls or stop, decided by the accumulator
  end
  return out
end
