-- line: helpers shared by the scripts that keep a resource's wait line (the
-- source is put in front of acquire, release, keepalive and leave, so one
-- definition serves them all). It has no KEYS or ARGV of its own: each
-- function takes the keys of one resource's line, a ZSET of waiting values
-- scored by ticket, and its lease ZSET (value -> server ms until which the
-- place is held). Returns nothing itself; first_live returns the head.
--
-- The helpers are defined by line_helpers(), which a script calls before its
-- first use of them: seven closures made on every call cost an empty script
-- 1-2 µs on Redis 7 here (SLOWLOG, a noisy machine), which a semaphore's
-- plain acquire and its release nobody waits for (the uncontended cycle)
-- need not pay. lineScript() calls it
-- first thing; a script built with lineScriptOnDemand() calls it itself, on
-- the paths that reach the line.

local server_time, first_live, announce_handoff, hand_off, leave_line, wake_heads, stand_in_line

local function line_helpers()
  -- Server time in ms and µs. Before Redis 7 a script that reads TIME must
  -- replicate its effects, not itself: callers call redis.replicate_commands()
  -- before their first write.
  server_time = function()
    local time = redis.call('TIME')
    local seconds, micros = tonumber(time[1]), tonumber(time[2])
    return seconds * 1000 + math.floor(micros / 1000), seconds * 1000000 + micros
  end

  -- The first waiter whose lease has not passed; waiters ahead of it whose
  -- lease passed are dropped, all at once, however many died.
  first_live = function(line, lease, now_ms)
    while true do
      local head = redis.call('ZRANGE', line, 0, 0)[1]
      if not head then return nil end
      local held_until = tonumber(redis.call('ZSCORE', lease, head))
      if held_until and held_until > now_ms then return head end
      redis.call('ZREM', line, head)
      redis.call('ZREM', lease, head)
    end
  end

  -- Tells the waiter whose value is `head` that `key` went to it: on the
  -- handoff channel of its process (the tag in front of the value, see
  -- randomValue.ts), so that no other process wakes; a value without a tag
  -- (another client) hears it on the key's release channel. The message is
  -- '<value> <server µs> <reservation ms> <key>': the waiter takes the lock
  -- from it only if the server time is past that of its own last attempt's
  -- reply (an older handoff may have run out since; see handoffGrant.ts).
  announce_handoff = function(key, head, now_us, reservation_ms)
    local tag = string.match(head, '^(%x+)%.')
    if tag then
      local stamp = string.format('%.0f', now_us) .. ' ' .. reservation_ms
      redis.call('PUBLISH', 'quorumlock:handoff:' .. tag, head .. ' ' .. stamp .. ' ' .. key)
    else
      redis.call('PUBLISH', 'quorumlock:released:' .. key, head)
    end
  end

  -- The free key goes to the line's live head as a short reservation (its
  -- value with reservation_ms), announced to that waiter alone (see
  -- announce_handoff); it then takes the key with its TTL through the usual checks.
  -- A waiter undoing its own attempt hears it too when the key goes back to
  -- itself (first in line): it comes back for it at once, instead of after
  -- its backoff while the reservation runs out. (Not after an attempt that
  -- used up its validity: that undo does not rejoin, and the key goes on.)
  hand_off = function(key, line, lease, now_ms, now_us, reservation_ms)
    local head = first_live(line, lease, now_ms)
    if not head then return false end
    -- With others behind it, the key goes marked, so that its release looks
    -- for the line (release.lua skips it for an unmarked key nobody waited for).
    local behind = redis.call('ZCARD', line) > 1
    redis.call('SET', key, behind and head .. '!' or head, 'PX', reservation_ms)
    announce_handoff(key, head, now_us, reservation_ms)
    return true
  end

  -- A waiter steps out of a line (its attempt was granted, or a release woke it).
  leave_line = function(line, lease, value)
    redis.call('ZREM', line, value)
    redis.call('ZREM', lease, value)
  end

  -- Wakes the first `count` live waiters of a line whose turn a release opened
  -- (count nil: every one of them), each told alone (announce_handoff, with no
  -- reservation: the key is not kept for it, it retries at once), and takes
  -- them out of the line, so that the next release wakes the next ones. A woken
  -- waiter that still finds no room goes back to its place: its ticket keeps
  -- it. `key` names the channel its waiters listen on. Returns how many it woke.
  wake_heads = function(key, line, lease, count, now_ms, now_us)
    local woken = 0
    while count == nil or woken < count do
      local head = first_live(line, lease, now_ms)
      if not head then break end
      leave_line(line, lease, head)
      announce_handoff(key, head, now_us, 0)
      woken = woken + 1
    end
    return woken
  end

  -- A waiter that failed an attempt from the line stands in it (or keeps its
  -- place) at `ticket`, the same on every node, for a lease; the line's keys
  -- live as long. Returns the reply that tells the waiter so: {-ticket, server
  -- µs} (acquire.lua's, read by toLineReply).
  stand_in_line = function(line, lease, value, ticket, lease_ms, now_ms, now_us)
    redis.call('ZADD', line, ticket, value)
    redis.call('ZADD', lease, string.format('%.0f', now_ms + tonumber(lease_ms)), value)
    redis.call('PEXPIRE', line, lease_ms)
    redis.call('PEXPIRE', lease, lease_ms)
    return {-tonumber(ticket), now_us}
  end
end
