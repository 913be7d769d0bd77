-- OpenAI chat completions (POST {baseUrl}/chat/completions, baseUrl like http://host/v1).
-- Also serves OpenAI-compatible servers: vLLM, llama.cpp server, LM Studio.
-- Tables in and out use the unified camelCase fields of adapters/llm/llmTypes.ts.

framing = "sse"

local present = json.present

local function wire_message(m)
  if m.role == "tool" then
    return { role = "tool", tool_call_id = m.toolCallId, content = m.content }
  end
  local out = { role = m.role, content = m.content }
  if m.role == "assistant" and m.toolCalls and #m.toolCalls > 0 then
    local calls = json.array()
    for _, c in ipairs(m.toolCalls) do
      calls[#calls + 1] = {
        id = c.id,
        type = "function",
        ["function"] = { name = c.name, arguments = json.encode(json.object(c.arguments)) },
      }
    end
    out.tool_calls = calls
    if m.content == "" then out.content = json.null end
  end
  return out
end

function transform_request(req, source)
  local messages = json.array()
  for _, m in ipairs(req.messages) do messages[#messages + 1] = wire_message(m) end
  local body = { model = req.model, messages = messages, stream = req.stream }
  if req.tools and #req.tools > 0 then
    local tools = json.array()
    for _, t in ipairs(req.tools) do
      tools[#tools + 1] = {
        type = "function",
        ["function"] = { name = t.name, description = t.description, parameters = t.parameters },
      }
    end
    body.tools = tools
  end
  if req.maxTokens then body.max_tokens = req.maxTokens end
  if req.temperature then body.temperature = req.temperature end
  if req.stream then body.stream_options = { include_usage = true } end
  return { path = "/chat/completions", body = body }
end

function headers(config)
  return bearer(config, { ["Content-Type"] = "application/json" })
end

local FINISH = { stop = "stop", length = "length", tool_calls = "tool_calls", function_call = "tool_calls", content_filter = "error" }

local function finish_reason(r)
  r = present(r)
  if r == nil then return nil end
  return FINISH[r] or "stop"
end

local function parse_arguments(text, name)
  text = present(text)
  if text == nil or text == "" then return json.object() end
  local ok, value = pcall(json.decode, text)
  if not ok or type(value) ~= "table" then
    error("tool call '" .. tostring(name) .. "' arguments are not a JSON object: " .. tostring(text))
  end
  return value
end

local function usage_of(u)
  u = present(u)
  if u == nil then return nil end
  return { inputTokens = present(u.prompt_tokens) or 0, outputTokens = present(u.completion_tokens) or 0 }
end

function transform_response(resp)
  if present(resp.error) then
    error("provider error: " .. tostring(present(resp.error.message) or json.encode(resp.error)))
  end
  local choice = resp.choices and resp.choices[1]
  if choice == nil then error("response has no choices[1]") end
  local msg = choice.message
  local calls = json.array()
  for i, c in ipairs(present(msg.tool_calls) or {}) do
    calls[#calls + 1] = {
      id = present(c.id) or ("call_" .. (i - 1)),
      name = c["function"].name,
      arguments = parse_arguments(c["function"].arguments, c["function"].name),
    }
  end
  local reason = finish_reason(choice.finish_reason) or (#calls > 0 and "tool_calls" or "stop")
  return { text = present(msg.content) or "", toolCalls = calls, finishReason = reason, usage = usage_of(resp.usage) }
end

function transform_stream_chunk(chunk)
  if chunk == "[DONE]" then return { done = true } end
  local data = json.decode(chunk)
  if present(data.error) then
    return { error = tostring(present(data.error.message) or json.encode(data.error)), finishReason = "error" }
  end
  local delta = {}
  local any = false
  local choice = present(data.choices) and data.choices[1]
  if choice then
    local d = present(choice.delta) or {}
    local text = present(d.content)
    if text and text ~= "" then delta.text = text; any = true end
    local tcs = present(d.tool_calls)
    if tcs and #tcs > 0 then
      local out = json.array()
      for _, tc in ipairs(tcs) do
        local fn = present(tc["function"]) or {}
        out[#out + 1] = { index = tc.index, id = present(tc.id), name = present(fn.name), argumentsFragment = present(fn.arguments) }
      end
      delta.toolCalls = out
      any = true
    end
    local reason = finish_reason(choice.finish_reason)
    if reason then delta.finishReason = reason; any = true end
  end
  local usage = usage_of(data.usage)
  if usage then delta.usage = usage; any = true end
  if any then return delta end
  return nil
end
