-- acquire: take every resource or none, atomically on this node; with
-- fencing, also hand out the next fencing token of each resource; in line
-- mode, take them only in the order of the resources' wait lines.
-- KEYS[1..n]     the resources
-- then, with fencing only, n keys: each resource's token counter
-- then, in line mode only, 3 keys per resource: its line, lease and ticket
--                counter (lineKeys.ts)
-- ARGV[1]        the lock's random value
-- ARGV[2]        TTL in milliseconds
-- ARGV[3]        'fence' to hand out tokens; '' or absent otherwise
-- ARGV[4]        'line' when the caller waits (after its first attempt
--                failed); absent otherwise
-- ARGV[5]        line mode: the lease in ms (also every line key's PEXPIRE)
-- ARGV[6]        line mode: the caller's ticket, the same on every node
--                ('0': none yet, the node hands out the next one)
-- Returns 1, or with fencing an array of n tokens, when every key now holds
-- the value with the TTL (also when some already held it, marked or not: a
-- retried request whose first reply was lost, or a handoff reservation);
-- each counter is INCRemented and raised to at least the server time in
-- microseconds, so a node restarted empty still hands out tokens above those
-- it gave before (tokens stay below 2^53). Otherwise, with nothing but the
-- line written: 0 outside line mode; in line mode {-ticket, server µs}, the
-- caller's place and when the node gave it (a handoff announced with a
-- later server time came after this reply: handoffGrant.ts), after it
-- joined every line (or kept its place, raised to ARGV[6]), refreshed its
-- lease and marked the first key held by another value with a trailing '!'
-- (APPEND keeps its TTL), so that its holder's release announces.
local MARK = '!'
local value = ARGV[1]
local marked = value .. MARK
local ttl = ARGV[2]
local fencing = ARGV[3] == 'fence'
local in_line = ARGV[4] == 'line'
local per_resource = (fencing and 2 or 1) + (in_line and 3 or 0)
local n = #KEYS / per_resource
local line_base = fencing and 2 * n or n

if fencing or in_line then
  -- Before Redis 7 a script that reads TIME must replicate its effects, not itself.
  if redis.replicate_commands then redis.replicate_commands() end
end
local now_ms, now_us
if fencing or in_line then now_ms, now_us = server_time() end

local stored = {}
local held_by, held_value = nil, nil
for i = 1, n do
  local current = redis.call('GET', KEYS[i])
  if current and current ~= value and current ~= marked then
    if not held_by then held_by, held_value = i, current end
    if not in_line then return 0 end
  end
  stored[i] = current or value
end

if in_line then
  local lease_ms = tonumber(ARGV[5])
  local first = held_by == nil
  for i = 1, n do
    local at = line_base + 3 * (i - 1)
    local head = first_live(KEYS[at + 1], KEYS[at + 2], now_ms)
    if head and head ~= value then first = false end
  end
  if not first then
    if held_by and string.sub(held_value, -1) ~= MARK then redis.call('APPEND', KEYS[held_by], MARK) end
    -- One ticket on every line of the lock, so lines of different resources
    -- agree on who goes first and no two waiters hold out on each other.
    local ticket = tonumber(ARGV[6]) or 0
    local own_ticket = ticket > 0
    local everywhere = true
    -- Counters just incremented need no second read.
    local counted = {}
    for i = 1, n do
      local at = line_base + 3 * (i - 1)
      local score = tonumber(redis.call('ZSCORE', KEYS[at + 1], value))
      if score then
        if score > ticket then ticket = score end
      else
        everywhere = false
      end
    end
    if not everywhere and not own_ticket then
      -- A waiter without a ticket of its own (our client always brings one,
      -- the same to every node: LinePosition) goes to the back: above every
      -- ticket handed out here, and above the server time, so a counter that
      -- expired cannot go back.
      for i = 1, n do
        local counter = KEYS[line_base + 3 * i]
        local next_ticket = redis.call('INCR', counter)
        counted[i] = next_ticket
        if next_ticket < now_us then next_ticket = now_us end
        if next_ticket > ticket then ticket = next_ticket end
      end
    end
    local score = string.format('%.0f', ticket)
    for i = 1, n do
      local at = line_base + 3 * (i - 1)
      local counter = KEYS[at + 3]
      if (counted[i] or tonumber(redis.call('GET', counter)) or 0) < ticket then redis.call('SET', counter, score) end
      redis.call('ZADD', KEYS[at + 1], score, value)
      redis.call('ZADD', KEYS[at + 2], string.format('%.0f', now_ms + lease_ms), value)
      for j = 1, 3 do redis.call('PEXPIRE', KEYS[at + j], lease_ms) end
    end
    return {-ticket, now_us}
  end
  for i = 1, n do
    local at = line_base + 3 * (i - 1)
    redis.call('ZREM', KEYS[at + 1], value)
    redis.call('ZREM', KEYS[at + 2], value)
  end
end

local tokens = {}
for i = 1, n do
  redis.call('SET', KEYS[i], stored[i], 'PX', ttl)
  if fencing then
    local token = redis.call('INCR', KEYS[n + i])
    if token < now_us then
      token = now_us
      redis.call('SET', KEYS[n + i], string.format('%.0f', now_us))
    end
    tokens[i] = token
  end
end
if fencing then return tokens end
return 1
