-- release: delete each resource that still holds our value, marked or not
-- (compare-and-delete); a resource with a wait line goes straight to the
-- line's live head as a reservation (line.lua's hand_off), others announce
-- the deletions that waiters listen for, so that they retry at once instead
-- of polling. A deleted key K is announced on 'quorumlock:released:' .. K
-- (RELEASE_CHANNEL_PREFIX in release.ts) with ''; a handoff is announced to
-- its waiter's process alone (line.lua's announce_handoff).
-- KEYS[1..n]      the resources
-- KEYS[n+1..3n]   each resource's line and lease (lineKeys.ts)
-- ARGV[1]         the lock's random value
-- ARGV[2]         absent: announce only the keys a waiter marked with a
--                 trailing '!' (acquire.lua); 'all': every deletion (the
--                 caller's process has waiters in line); 'none': nothing but
--                 a handoff (undoing a failed attempt; to the caller itself when
--                 it rejoined first in line). The
--                 commonest call passes one argument: each one more was a
--                 tenth of this script's server time.
-- ARGV[3]         the reservation in ms (absent: 600)
-- ARGV[4], [5]    with 'none' only, when the caller waits in line: its ticket
--                 and lease ms, to put it back in its place before the
--                 handoff (the key may then be reserved for the caller itself;
--                 not sent when the attempt used up its validity, which the
--                 caller backs off from rather than retry at once)
-- Returns the number of keys deleted; keys that expired or hold another value
-- are left alone, so releasing an expired lock returns 0 and is not an error.
-- With ARGV[4]: {deleted, server µs when the caller was put back in line, or
-- 0 if it was not}; a handoff announced to it at that time or later is one
-- it may count (wakeup/handoffGrant.ts), this script's own among them.
-- Before Redis 7 a script that reads TIME must replicate its effects, not itself.
if redis.replicate_commands then redis.replicate_commands() end
local value = ARGV[1]
local announce = ARGV[2]
local reservation_ms = ARGV[3] or '600'
local n = #KEYS / 3
local released = 0
local now_ms, now_us = nil, nil
local rejoined_us = 0

for i = 1, n do
  local key = KEYS[i]
  local current = redis.call('GET', key)
  if current == value or current == value .. '!' then
    redis.call('DEL', key)
    released = released + 1
    local line, lease = KEYS[n + 2 * i - 1], KEYS[n + 2 * i]
    local handed = false
    -- An unmarked key with no waiter of ours: nobody from the lines tried
    -- it while we held it, so a release nobody waits for costs no more
    -- than before the lines existed. (A waiter that joined before we took
    -- the key polls within its backoff, and its attempt takes it in order.)
    local waited = announce ~= nil or current ~= value
    if waited and redis.call('EXISTS', line) == 1 then
      if not now_ms then now_ms, now_us = server_time() end
      if ARGV[4] then
        redis.call('ZADD', line, ARGV[4], value)
        redis.call('ZADD', lease, string.format('%.0f', now_ms + tonumber(ARGV[5])), value)
        rejoined_us = now_us
      end
      handed = hand_off(key, line, lease, now_ms, now_us, reservation_ms)
    end
    if not handed and announce ~= 'none' and (announce == 'all' or current ~= value) then
      redis.call('PUBLISH', 'quorumlock:released:' .. key, '')
    end
  end
end
if ARGV[4] then return {released, rejoined_us} end
return released
