-- semaphoreAcquire: take a semaphore's permit slots, all or none, if the
-- resource's limit is the one the caller states. Each slot is a mutex key
-- (SET NX semantics); a holder's lease is the key's TTL, so an expired
-- holder is gone with its key and nothing needs pruning. In line mode a
-- caller that finds a slot held stands in the resource's wait line, which
-- semaphoreRelease.lua wakes from.
-- KEYS[1]     the resource's limit record
-- KEYS[2..n]  the permit slots to take
-- KEYS[n+1], KEYS[n+2]  line mode only: the limit record's wait line and
--             its lease (lineKeys.ts)
-- KEYS[n+3..] line mode only: every permit slot of the resource, `limit` of
--             them, to tell a full semaphore from a held candidate
--             (probe mode: they follow KEYS[n] at once, with no line keys)
-- ARGV[1]     the holder's random value
-- ARGV[2]     TTL in milliseconds
-- ARGV[3]     the limit the caller states
-- ARGV[4]     'line' when the caller waits (after its first attempt
--             failed); 'probe' for a later candidate set of a plain attempt
--             (the first set was held); absent otherwise
-- ARGV[5]     line mode: the lease in ms of its place (and the line keys' TTL)
-- ARGV[6]     line mode: the caller's ticket, the same on every node
-- Returns {1, the limit record's TTL in ms} when every slot now holds the
-- value (the record then lasts longer than the TTL, so it outlives every slot
-- beside it; in line mode the caller left the line; a record renewed gets
-- twice the TTL, so that the acquires of the next TTL need not write it
-- again, and its TTL tells the caller how long its next acquires need not
-- read it: LiveLimitRecords.ts), 0 when any slot is held (nothing is written), or
-- minus the recorded limit when the record holds another limit (nothing is
-- written). In line mode a held slot returns 0 while enough other slots
-- are free for the caller to try them, and otherwise {-ticket, server µs},
-- the caller's place in the line it now stands in (line.lua's
-- stand_in_line): no other set of slots would do either. In probe mode a
-- held slot returns 0 while enough other slots are free, and otherwise 2:
-- no other set would do, so the caller need not try one (nothing is written).
-- (line.lua's helpers are put in front of this source, defined only in line
-- mode, and semaphoreRecord.lua's.)
local in_line = ARGV[4] == 'line'
local probing = ARGV[4] == 'probe'
if in_line then
  if redis.replicate_commands then redis.replicate_commands() end
  line_helpers()
end
local limitKey = KEYS[1]
local value = ARGV[1]
local ttl = tonumber(ARGV[2])
local limit = ARGV[3]
local slots = in_line and #KEYS - 2 - tonumber(limit) or probing and #KEYS - tonumber(limit) or #KEYS
-- Where every slot of the resource is named (line and probe modes).
local all_from = in_line and slots + 3 or slots + 1

local mismatch = other_limit(limitKey, limit)
if mismatch then return mismatch end
local taken_at_once = slots == 2 and not in_line
local held = false
if taken_at_once then
  -- One slot, not in line (an uncontended permit): SET NX is the check and the write.
  held = not redis.call('SET', KEYS[2], value, 'NX', 'PX', ttl)
else
  for i = 2, slots do
    if redis.call('EXISTS', KEYS[i]) == 1 then
      held = true
      break
    end
  end
end
if held then
  if not in_line and not probing then return 0 end
  local free = 0
  for j = all_from, #KEYS do free = free + 1 - redis.call('EXISTS', KEYS[j]) end
  if free >= slots - 1 then return 0 end
  if probing then return 2 end
  local now_ms, now_us = server_time()
  return stand_in_line(KEYS[slots + 1], KEYS[slots + 2], value, ARGV[6], ARGV[5], now_ms, now_us)
end
if not taken_at_once then
  for i = 2, slots do
    redis.call('SET', KEYS[i], value, 'PX', ttl)
  end
end
local record_ms = record_outliving(limitKey, limit, ttl)
if in_line then leave_line(KEYS[slots + 1], KEYS[slots + 2], value) end
return {1, record_ms}
