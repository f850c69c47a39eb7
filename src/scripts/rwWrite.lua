-- rwWrite: take the write lock when no writer holds it, no reader's lease
-- is live and no other waiting writer claims it. Otherwise a writer that
-- must wait claims the resource, for a short lease of its own, so that new
-- readers wait behind it; a dead writer's claim lapses with that lease.
-- KEYS[1]  the writer's key
-- KEYS[2]  the readers' sorted set (expired leases are pruned here)
-- KEYS[3]  a waiting writer's claim
-- KEYS[4]  with fencing: the writer key's token counter
-- then, in line mode only, 2 keys: the writers' wait line and its lease
--          (lineKeys.ts of the writer's key), which the releases wake
-- ARGV[1]  the writer's random value
-- ARGV[2]  TTL in milliseconds
-- ARGV[3]  the claim's lease in milliseconds
-- ARGV[4]  'fence' to hand out a fencing token; '' or absent otherwise
-- ARGV[5]  'line' when the writer waits (after its first attempt failed);
--          absent otherwise
-- ARGV[6]  line mode: the lease in ms of its place (and the line keys' TTL)
-- ARGV[7]  line mode: the writer's ticket, the same on every node
-- A claim stands for one writer; from the line, the writer earliest in it
-- takes it over.
-- Returns 1 (with fencing {token}) when the writer's key now holds the value
-- (its claim is gone): the counter is INCRemented and raised to at least the
-- server time in microseconds, as acquire.lua does, so a node restarted empty
-- still hands out larger tokens. Or 0 when it must wait (its claim is set or
-- renewed, unless another writer's claim is live); in line mode
-- {-ticket, server µs} instead, the writer's place in the line (line.lua's
-- stand_in_line), and a granted writer leaves the line.
-- (server_time comes from line.lua, put in front of this source.)
redis.replicate_commands()
local writer, readers, claim = KEYS[1], KEYS[2], KEYS[3]
local value = ARGV[1]
local ttl = tonumber(ARGV[2])
local claimMs = tonumber(ARGV[3])
local fencing = ARGV[4] == 'fence'
local in_line = ARGV[5] == 'line'
local line_at = fencing and 5 or 4
local now, now_us = server_time()

local function wait()
  if not in_line then return 0 end
  return stand_in_line(KEYS[line_at], KEYS[line_at + 1], value, ARGV[7], ARGV[6], now, now_us)
end

redis.call('ZREMRANGEBYSCORE', readers, '-inf', now)
local claimant = redis.call('GET', claim)
if claimant and claimant ~= value then
  -- From the line, a writer ahead of the claimant in it (or of one not in
  -- it) takes the claim over: writers racing on several nodes would split
  -- the claims among them, first come on each, and none would gather a
  -- quorum until they lapsed. The order of tickets is the same everywhere.
  local theirs = in_line and redis.call('ZSCORE', KEYS[line_at], claimant)
  if not in_line or (theirs and tonumber(theirs) <= tonumber(ARGV[7])) then
    return wait()
  end
end
if redis.call('EXISTS', writer) == 1 or redis.call('ZCARD', readers) > 0 then
  redis.call('SET', claim, value, 'PX', claimMs)
  return wait()
end
redis.call('SET', writer, value, 'PX', ttl)
if claimant then
  redis.call('DEL', claim)
end
if in_line then leave_line(KEYS[line_at], KEYS[line_at + 1], value) end
if not fencing then
  return 1
end
local token = redis.call('INCR', KEYS[4])
if token < now_us then
  token = now_us
  redis.call('SET', KEYS[4], string.format('%.0f', now_us))
end
return {token}
