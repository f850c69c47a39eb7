-- renewEach: the renewals of many holders of one primitive in one call, each
-- exactly as that primitive's extend script renews one holder alone: its
-- source is put in front of this one as the body of
-- renew_one(KEYS, ARGV), which sees only that holder's keys and arguments.
-- No renewal depends on another.
-- KEYS              every holder's keys, holder after holder
-- ARGV[1]           how many arguments of its own each holder has (A)
-- ARGV[2]           how many arguments every holder shares (S): they follow
--                   each holder's own, in its ARGV (a TTL, a limit)
-- ARGV[3]           how many keys each holder has, or 0 when each holder's
--                   key count comes first among its arguments below
-- ARGV[4..3+S]      the shared arguments
-- then per holder   its key count (when ARGV[3] is 0), then its A arguments
-- Returns a string of one character per holder, in order: '1' when
-- renew_one answered 1, else '0' (that holder's keys are left as renew_one
-- leaves them when it refuses: unchanged).
local own = tonumber(ARGV[1])
local shared = tonumber(ARGV[2])
local keys_each = tonumber(ARGV[3])
local results = {}
local first_key = 1
local at = 4 + shared
local holder = 0
while at <= #ARGV do
  holder = holder + 1
  local key_count = keys_each
  if key_count == 0 then
    key_count = tonumber(ARGV[at])
    at = at + 1
  end
  local keys = { unpack(KEYS, first_key, first_key + key_count - 1) }
  local args = { unpack(ARGV, at, at + own - 1) }
  for s = 1, shared do
    args[own + s] = ARGV[3 + s]
  end
  results[holder] = renew_one(keys, args) == 1 and '1' or '0'
  first_key = first_key + key_count
  at = at + own
end
return table.concat(results)
