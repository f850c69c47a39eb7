-- rwWrite: take the write lock when no writer holds it, no reader's lease
-- is live and no other waiting writer claims it. Otherwise a writer that
-- must wait claims the resource, for a short lease of its own, so that new
-- readers wait behind it; a dead writer's claim lapses with that lease.
-- KEYS[1]  the writer's key
-- KEYS[2]  the readers' sorted set (expired leases are pruned here)
-- KEYS[3]  a waiting writer's claim
-- KEYS[4]  with fencing: the writer key's token counter
-- ARGV[1]  the writer's random value
-- ARGV[2]  TTL in milliseconds
-- ARGV[3]  the claim's lease in milliseconds
-- ARGV[4]  'fence' to hand out a fencing token; absent otherwise
-- Returns 1 (with fencing {token}) when the writer's key now holds the value
-- (its claim is gone): the counter is INCRemented and raised to at least the
-- server time in microseconds, as acquire.lua does, so a node restarted empty
-- still hands out larger tokens. Or 0 when it must wait (its claim is set or
-- renewed, unless another writer's claim is live).
-- (server_time comes from line.lua, put in front of this source.)
redis.replicate_commands()
local writer, readers, claim = KEYS[1], KEYS[2], KEYS[3]
local value = ARGV[1]
local ttl = tonumber(ARGV[2])
local claimMs = tonumber(ARGV[3])
local fencing = ARGV[4] == 'fence'
local now, now_us = server_time()

redis.call('ZREMRANGEBYSCORE', readers, '-inf', now)
local claimant = redis.call('GET', claim)
if claimant and claimant ~= value then
  return 0
end
if redis.call('EXISTS', writer) == 1 or redis.call('ZCARD', readers) > 0 then
  redis.call('SET', claim, value, 'PX', claimMs)
  return 0
end
redis.call('SET', writer, value, 'PX', ttl)
if claimant then
  redis.call('DEL', claim)
end
if not fencing then
  return 1
end
local token = redis.call('INCR', KEYS[4])
if token < now_us then
  token = now_us
  redis.call('SET', KEYS[4], string.format('%.0f', now_us))
end
return {token}
