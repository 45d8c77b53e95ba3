-- rlcheck: check every rule of one limiter, then record the call in all of
-- them or in none. One sorted set per rule (KEYS[i]); scores are integer
-- microseconds and every call brings a member of its own.
--
-- ARGV[1] check time, ARGV[2] record time, both integer microseconds, or
--   both empty to read the server clock (TIME) here;
-- ARGV[3] the call's member;
-- ARGV[4] '1' to sweep every set of its expired entries, else '0';
-- then per rule i: ARGV[3i+2] limit, ARGV[3i+3] window in microseconds,
--   ARGV[3i+4] key expiry in milliseconds.
-- Reply {wait, at, rule}: wait = 0 means the call was recorded at `at`;
-- otherwise nothing was written, and rule i asks for the longest wait.
--
-- Lua numbers are doubles: epoch microseconds (< 2^53) are exact in them,
-- but Lua's tostring and '..' print only 14 significant digits, and how
-- redis.call prints a number has changed between Redis versions; so every
-- time goes back to Redis as a string made with %d.
local check, record
if ARGV[1] == '' then
  local t = redis.call('TIME')
  record = t[1] .. string.format('%06d', tonumber(t[2]))
  check = tonumber(record)
else
  check = tonumber(ARGV[1])
  record = ARGV[2]
end

-- A rule is full when its limit-th latest entry is still in the window
-- (check - score < window, half-open); the call may go when that entry
-- leaves. Reading that one entry decides the rule without trimming first,
-- so a refused call writes nothing.
local wait, binding = 0, 0
local sweep = {}
for i = 1, #KEYS do
  local limit = tonumber(ARGV[3 * i + 2])
  local entry = redis.pcall('ZRANGE', KEYS[i], -limit, -limit, 'WITHSCORES')
  if entry.err then
    local kind = redis.call('TYPE', KEYS[i])
    return redis.error_reply('WRONGTYPE rlcheck: key ' .. KEYS[i] .. ' holds a ' ..
      tostring(kind.ok or kind) .. ', not the sorted set of a rate rule')
  end
  sweep[i] = ARGV[4] == '1'
  if entry[2] then
    local w = tonumber(entry[2]) + tonumber(ARGV[3 * i + 3]) - check
    if w > wait then
      wait, binding = w, i
    end
    -- Expired entries are harmless to the decision above; they are swept
    -- when the set holds more than limit of them, or on the caller's cue.
    sweep[i] = sweep[i] or w <= 0
  end
end
if wait > 0 then
  return {wait, check, binding}
end

for i = 1, #KEYS do
  local key = KEYS[i]
  if sweep[i] then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', check - tonumber(ARGV[3 * i + 3])))
  end
  if redis.call('ZADD', key, record, ARGV[3]) == 0 then
    return redis.error_reply('rlcheck: member ' .. ARGV[3] .. ' is already in ' .. key ..
      ': limiters sharing a key need distinct member prefixes')
  end
  redis.call('PEXPIRE', key, ARGV[3 * i + 4])
end
return {0, tonumber(record), 0}
