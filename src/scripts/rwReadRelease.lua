-- rwReadRelease: end a reader's lease; the release that leaves no live
-- reader wakes the next writer (rwWake.lua), if one waits.
-- KEYS[1]  the readers' sorted set
-- KEYS[2]  the writer's key (not read: it names the writers' channel)
-- KEYS[3]  a waiting writer's claim
-- KEYS[4], KEYS[5]  the writers' wait line and its lease (lineKeys.ts of
--          the writer's key)
-- (KEYS[2..5] may be left out: then nobody is woken.)
-- ARGV[1]  the reader's random value
-- Returns 1 when the reader was removed, 0 when its lease had already ended
-- (releasing an expired read lock is not an error).
-- Before Redis 7 a script that reads TIME must replicate its effects, not itself.
-- (line.lua's and rwWake.lua's helpers are put in front of this source.)
if redis.replicate_commands then redis.replicate_commands() end
local readers = KEYS[1]
local removed = redis.call('ZREM', readers, ARGV[1])
if removed == 0 or #KEYS < 5 then return removed end
local claim, line = KEYS[3], KEYS[4]
if redis.call('EXISTS', claim) == 0 and redis.call('EXISTS', line) == 0 then return removed end
local now_ms, now_us = server_time()
redis.call('ZREMRANGEBYSCORE', readers, '-inf', now_ms)
if redis.call('ZCARD', readers) == 0 then wake_next_writer(KEYS[2], claim, line, KEYS[5], now_ms, now_us) end
return removed
