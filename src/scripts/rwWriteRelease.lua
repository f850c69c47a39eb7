-- rwWriteRelease: the writer lets go (compare-and-delete of its key), and
-- lets in those who may now enter: with a writer's claim standing, its
-- claimant alone, woken (readers stay held back by the claim). Without one,
-- every live reader of the readers' line is handed a reservation
-- (rwWake.lua's grant_readers), and the first live writer of the writers'
-- line is woken: finding readers, it claims the resource behind them, so
-- that readers who come later wait for it, and the last reader's release
-- wakes it again (rwReadRelease.lua). A release nobody waits for does
-- nothing more.
-- KEYS[1]  the writer's key
-- KEYS[2]  the readers' sorted set (it also names the readers' channel)
-- KEYS[3]  a waiting writer's claim
-- KEYS[4], KEYS[5]  the writers' wait line and its lease (lineKeys.ts of
--          the writer's key)
-- KEYS[6], KEYS[7]  the readers' wait line and its lease (lineKeys.ts of
--          the readers' set)
-- ARGV[1]  the writer's random value
-- ARGV[2]  a reader's reservation in milliseconds
-- Returns 1 when the key held the value and was deleted, else 0 (releasing
-- an expired write lock is not an error). The write lock of a writer that
-- downgraded (rwReadExtend.lua: its key became its reader's lease) ends with
-- this release too: it returns 0 and, with no claim standing, wakes the
-- waiting readers, who may now read beside it.
-- Before Redis 7 a script that reads TIME must replicate its effects, not itself.
-- (line.lua's and rwWake.lua's helpers are put in front of this source.)
if redis.replicate_commands then redis.replicate_commands() end
local writer, claim = KEYS[1], KEYS[3]
local writers_line, readers_line = KEYS[4], KEYS[6]
if redis.call('GET', writer) ~= ARGV[1] then
  if redis.call('ZSCORE', KEYS[2], ARGV[1]) and redis.call('EXISTS', claim) == 0 and redis.call('EXISTS', readers_line) == 1 then
    local now_ms, now_us = server_time()
    wake_heads(KEYS[2], readers_line, KEYS[7], nil, now_ms, now_us)
  end
  return 0
end
redis.call('DEL', writer)
if redis.call('EXISTS', claim) == 0 and redis.call('EXISTS', writers_line) == 0 and redis.call('EXISTS', readers_line) == 0 then
  return 1
end
local now_ms, now_us = server_time()
if redis.call('EXISTS', claim) == 1 then
  wake_next_writer(writer, claim, writers_line, KEYS[5], now_ms, now_us)
else
  grant_readers(KEYS[2], readers_line, KEYS[7], tonumber(ARGV[2]), now_ms, now_us)
  wake_heads(writer, writers_line, KEYS[5], 1, now_ms, now_us)
end
return 1
