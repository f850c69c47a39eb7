-- semaphoreTake: take `permits` of a semaphore's slots, chosen by the node
-- from every slot of the resource in the order the caller names (the same
-- order on every node of a Redlock): first the slots a release reserved for
-- this caller (semaphoreRelease.lua's handoff: its value and '~'; or its
-- own value, a write of an earlier try not yet undone), then the free ones, all or
-- none, if the resource's limit is the one the caller states. Each slot is a
-- mutex key: it is written only when it does not exist or already holds the
-- caller's value or its reservation, so a slot never holds two values. One request per node
-- replaces a try per candidate set; on several nodes a permit counts only
-- where a quorum chose the same slots (SemaphoreCoordinator.ts).
-- KEYS[1]          the resource's limit record
-- KEYS[2..limit+1] every permit slot of the resource, in the caller's order
-- KEYS[limit+2], KEYS[limit+3]  line mode only: the limit record's wait line
--                  and its lease (lineKeys.ts)
-- ARGV[1]          the holder's random value
-- ARGV[2]          TTL in milliseconds
-- ARGV[3]          the limit the caller states
-- ARGV[4]          how many permits (slots) it takes
-- ARGV[5]          'line' when the caller waits in the line; absent otherwise
-- ARGV[6]          line mode: the lease in ms of its place (and the line keys' TTL)
-- ARGV[7]          line mode: the caller's ticket, the same on every node
-- Returns {1, the limit record's TTL in ms, the chosen slots' positions in
-- KEYS (2-based)...} when they now hold the value (the record then outlives
-- them, as semaphoreAcquire.lua keeps it; in line mode the caller left the
-- line); minus the recorded limit when the record holds another limit; when
-- too few slots are free for the caller: 2 (nothing is written), or in line
-- mode {-ticket, server µs}, its place in the line it now stands in
-- (line.lua's stand_in_line).
-- (line.lua's helpers are put in front of this source, defined only in line
-- mode, and semaphoreRecord.lua's.)
local in_line = ARGV[5] == 'line'
if in_line then
  -- Before Redis 7 a script that reads TIME must replicate its effects, not itself.
  if redis.replicate_commands then redis.replicate_commands() end
  line_helpers()
end
local limitKey = KEYS[1]
local value = ARGV[1]
local ttl = tonumber(ARGV[2])
local limit = ARGV[3]
local wanted = tonumber(ARGV[4])
local last = tonumber(limit) + 1

local mismatch = other_limit(limitKey, limit)
if mismatch then return mismatch end
-- Reserved for us first (a release handed them to us in line), then free
-- ones in the caller's order: every caller's reservations are used before
-- it takes a slot someone else may be handed next.
local reservation = value .. '~'
local own, free = {}, {}
for i = 2, last do
  local current = redis.call('GET', KEYS[i])
  if current == reservation or current == value then
    own[#own + 1] = i
  elseif not current then
    free[#free + 1] = i
  end
end
if #own + #free < wanted then
  if not in_line then return 2 end
  local now_ms, now_us = server_time()
  return stand_in_line(KEYS[last + 1], KEYS[last + 2], value, ARGV[7], ARGV[6], now_ms, now_us)
end
local reply = {1, 0}
for k = 1, wanted do
  local i = own[k] or free[k - #own]
  redis.call('SET', KEYS[i], value, 'PX', ttl)
  reply[#reply + 1] = i
end
local record_ms = record_outliving(limitKey, limit, ttl)
reply[2] = record_ms
-- Reservations beyond what it takes (two releases handed it one each) go
-- back: free for the next try, instead of kept for nobody until they expire.
for k = wanted + 1, #own do redis.call('DEL', KEYS[own[k]]) end
if in_line then leave_line(KEYS[last + 1], KEYS[last + 2], value) end
return reply
