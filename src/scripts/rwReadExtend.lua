-- rwReadExtend: renew a reader's lease, only if it still holds one; or turn
-- a writer into a reader with the same value (a downgrade), in one step, so
-- that no other writer can come between.
-- KEYS[1]  the readers' sorted set
-- KEYS[2]  the writer's key
-- ARGV[1]  the reader's (or downgrading writer's) random value
-- ARGV[2]  new TTL in milliseconds, counted from now
-- Returns 1 when the value now holds a reader's lease of that TTL (the set
-- then lives at least as long), or 0 when it held neither a reader's lease
-- nor the writer's key (nothing is changed).
-- (server_time comes from line.lua, put in front of this source.)
redis.replicate_commands()
local readers, writer = KEYS[1], KEYS[2]
local value = ARGV[1]
local ttl = tonumber(ARGV[2])
local now = server_time()

redis.call('ZREMRANGEBYSCORE', readers, '-inf', now)
if not redis.call('ZSCORE', readers, value) then
  if redis.call('GET', writer) ~= value then
    return 0
  end
  redis.call('DEL', writer)
end
redis.call('ZADD', readers, now + ttl, value)
if redis.call('PTTL', readers) < ttl then
  redis.call('PEXPIRE', readers, ttl)
end
return 1
