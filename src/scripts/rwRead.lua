-- rwRead: take a read lock, unless a writer holds the resource or a waiting
-- writer has claimed it (writers are not starved: once one waits, new
-- readers wait behind it). Readers are members of a sorted set scored by the
-- server time (ms) their lease ends; expired ones are pruned here.
-- KEYS[1]  the writer's key
-- KEYS[2]  the readers' sorted set
-- KEYS[3]  a waiting writer's claim
-- KEYS[4], KEYS[5]  line mode only: the readers' wait line and its lease
--          (lineKeys.ts of the readers' set), which rwWriteRelease.lua wakes
-- ARGV[1]  the reader's random value
-- ARGV[2]  TTL in milliseconds
-- ARGV[3]  'line' when the reader waits (after its first attempt failed);
--          absent otherwise
-- ARGV[4]  line mode: the lease in ms of its place (and the line keys' TTL)
-- ARGV[5]  line mode: the reader's ticket, the same on every node
-- In line mode a reader the set already holds (a writer's release handed it
-- a reservation: rwWake.lua's grant_readers) renews its lease with the TTL,
-- whatever claim came after: this is its claim of the lock.
-- Returns 1 when the reader was added (the set then lives at least the TTL;
-- in line mode the reader left the line), or 0 when a writer holds or claims
-- the resource (nothing is written); in line mode {-ticket, server µs}
-- instead, the reader's place in the line (line.lua's stand_in_line).
-- (server_time comes from line.lua, put in front of this source.)
redis.replicate_commands()
local writer, readers, claim = KEYS[1], KEYS[2], KEYS[3]
local value = ARGV[1]
local ttl = tonumber(ARGV[2])
local in_line = ARGV[3] == 'line'
local now, now_us = server_time()

redis.call('ZREMRANGEBYSCORE', readers, '-inf', now)
local reserved = in_line and redis.call('ZSCORE', readers, value)
if not reserved and (redis.call('EXISTS', writer) == 1 or redis.call('EXISTS', claim) == 1) then
  if not in_line then return 0 end
  return stand_in_line(KEYS[4], KEYS[5], value, ARGV[5], ARGV[4], now, now_us)
end
redis.call('ZADD', readers, now + ttl, value)
if redis.call('PTTL', readers) < ttl then
  redis.call('PEXPIRE', readers, ttl)
end
if in_line then leave_line(KEYS[4], KEYS[5], value) end
return 1
