-- rwRead: take a read lock, unless a writer holds the resource or a waiting
-- writer has claimed it (writers are not starved: once one waits, new
-- readers wait behind it). Readers are members of a sorted set scored by the
-- server time (ms) their lease ends; expired ones are pruned here.
-- KEYS[1]  the writer's key
-- KEYS[2]  the readers' sorted set
-- KEYS[3]  a waiting writer's claim
-- ARGV[1]  the reader's random value
-- ARGV[2]  TTL in milliseconds
-- Returns 1 when the reader was added (the set then lives at least the TTL),
-- or 0 when a writer holds or claims the resource (nothing is written).
-- (server_time comes from line.lua, put in front of this source.)
redis.replicate_commands()
local writer, readers, claim = KEYS[1], KEYS[2], KEYS[3]
local value = ARGV[1]
local ttl = tonumber(ARGV[2])
local now = server_time()

redis.call('ZREMRANGEBYSCORE', readers, '-inf', now)
if redis.call('EXISTS', writer) == 1 or redis.call('EXISTS', claim) == 1 then
  return 0
end
redis.call('ZADD', readers, now + ttl, value)
if redis.call('PTTL', readers) < ttl then
  redis.call('PEXPIRE', readers, ttl)
end
return 1
