-- Anthropic Messages API (POST {baseUrl}/v1/messages, baseUrl like https://api.anthropic.com).
-- System messages go to the top-level `system`; tool results travel as `tool_result` blocks in a
-- user message, and consecutive user-side messages are merged (the API wants strict alternation).
-- Streaming is SSE; each `data:` payload carries its own `type`, so no state is kept between chunks.

framing = "sse"

local present = json.present

local DEFAULT_MAX_TOKENS = 4096

local function as_blocks(content)
  if type(content) == "string" then
    return json.array({ { type = "text", text = content } })
  end
  return content
end

local function append(messages, msg)
  local last = messages[#messages]
  if last and last.role == msg.role and msg.role == "user" then
    local blocks = as_blocks(last.content)
    for _, b in ipairs(as_blocks(msg.content)) do blocks[#blocks + 1] = b end
    last.content = blocks
  else
    messages[#messages + 1] = msg
  end
end

local function wire_message(m)
  if m.role == "tool" then
    return { role = "user", content = json.array({ { type = "tool_result", tool_use_id = m.toolCallId, content = m.content } }) }
  end
  if m.role == "assistant" and m.toolCalls and #m.toolCalls > 0 then
    local blocks = json.array()
    if m.content ~= "" then blocks[#blocks + 1] = { type = "text", text = m.content } end
    for _, c in ipairs(m.toolCalls) do
      blocks[#blocks + 1] = { type = "tool_use", id = c.id, name = c.name, input = json.object(c.arguments) }
    end
    return { role = "assistant", content = blocks }
  end
  return { role = m.role, content = m.content }
end

function transform_request(req, source)
  local system = {}
  local messages = json.array()
  for _, m in ipairs(req.messages) do
    if m.role == "system" then
      system[#system + 1] = m.content
    else
      append(messages, wire_message(m))
    end
  end
  local body = { model = req.model, max_tokens = req.maxTokens or DEFAULT_MAX_TOKENS, messages = messages }
  if #system > 0 then body.system = table.concat(system, "\n\n") end
  if req.tools and #req.tools > 0 then
    local tools = json.array()
    for _, t in ipairs(req.tools) do
      tools[#tools + 1] = { name = t.name, description = t.description, input_schema = t.parameters }
    end
    body.tools = tools
  end
  if req.temperature then body.temperature = req.temperature end
  if req.stream then body.stream = true end
  return { path = "/v1/messages", body = body }
end

function headers(config)
  local h = { ["content-type"] = "application/json", ["anthropic-version"] = "2023-06-01" }
  if config.apiKey and config.apiKey ~= "" then h["x-api-key"] = config.apiKey end
  return h
end

local STOP = { end_turn = "stop", stop_sequence = "stop", tool_use = "tool_calls", max_tokens = "length", refusal = "error" }

local function finish_reason(r)
  r = present(r)
  if r == nil then return nil end
  return STOP[r] or "stop"
end

function transform_response(resp)
  if resp.type == "error" then
    error("provider error: " .. tostring(present(resp.error) and resp.error.message or "unknown"))
  end
  local parts = {}
  local calls = json.array()
  for _, block in ipairs(present(resp.content) or {}) do
    if block.type == "text" then
      parts[#parts + 1] = block.text
    elseif block.type == "tool_use" then
      calls[#calls + 1] = { id = block.id, name = block.name, arguments = json.object(present(block.input) or {}) }
    end
  end
  local out = {
    text = table.concat(parts),
    toolCalls = calls,
    finishReason = finish_reason(resp.stop_reason) or (#calls > 0 and "tool_calls" or "stop"),
  }
  local u = present(resp.usage)
  if u then out.usage = { inputTokens = present(u.input_tokens) or 0, outputTokens = present(u.output_tokens) or 0 } end
  return out
end

function transform_stream_chunk(chunk)
  local ev = json.decode(chunk)
  local t = ev.type
  if t == "message_start" then
    local u = present(ev.message) and present(ev.message.usage)
    if u and present(u.input_tokens) then return { usage = { inputTokens = u.input_tokens } } end
    return nil
  elseif t == "content_block_start" then
    local block = ev.content_block
    if block.type == "tool_use" then
      return { toolCalls = json.array({ { index = ev.index, id = block.id, name = block.name } }) }
    elseif block.type == "text" and present(block.text) and block.text ~= "" then
      return { text = block.text }
    end
    return nil
  elseif t == "content_block_delta" then
    local d = ev.delta
    if d.type == "text_delta" then
      return { text = d.text }
    elseif d.type == "input_json_delta" then
      return { toolCalls = json.array({ { index = ev.index, argumentsFragment = d.partial_json } }) }
    end
    return nil -- thinking_delta, signature_delta, ...
  elseif t == "message_delta" then
    local out = {}
    local reason = finish_reason(present(ev.delta) and ev.delta.stop_reason)
    if reason then out.finishReason = reason end
    local u = present(ev.usage)
    if u and present(u.output_tokens) then out.usage = { outputTokens = u.output_tokens } end
    return out
  elseif t == "message_stop" then
    return { done = true }
  elseif t == "error" then
    return { error = tostring(present(ev.error) and ev.error.message or "unknown stream error"), finishReason = "error", done = true }
  end
  return nil -- ping, content_block_stop
end
