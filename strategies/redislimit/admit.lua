-- rlcheck: check every rule of one limiter, then record the call in all of
-- them or in none. One sorted set per rule (KEYS[1..n]); scores are integer
-- microseconds and every call brings a member of its own. KEYS[n+1] is the
-- expiry marker of this exact set of keys and expiries.
--
-- ARGV[1] check time, ARGV[2] record time, both integer microseconds, or
--   both empty to read the server clock (TIME) here;
-- ARGV[3] the call's member;
-- ARGV[4] '1' to sweep every set of its expired entries, else '0';
-- ARGV[5] the marker's lease G in milliseconds;
-- then per rule i: ARGV[3i+3] minus its limit (the rank to read),
--   ARGV[3i+4] window in microseconds, ARGV[3i+5] key expiry in ms.
-- Reply: the record time when the call was recorded; else {wait, check,
-- rule}: nothing was written, and rule i asks for the longest wait.
--
-- Lua numbers are doubles: epoch microseconds (< 2^53) are exact in them,
-- but Lua's tostring and '..' print only 14 significant digits, and
-- redis.call prints a number argument with printf (slow, and changed
-- between Redis versions); so every value goes to Redis as a string, times
-- made with %d.
local call = redis.call
local n = #KEYS - 1
local check, record, at
if ARGV[1] == '' then
  local t = call('TIME')
  check = t[1] * 1000000 + t[2]
  record = string.format('%d', check)
  at = check
else
  check = tonumber(ARGV[1])
  record = ARGV[2]
  at = tonumber(record)
end

-- A sweep removes only entries older than the window plus keep(i): the
-- window again, and at least 1 s. A caller's clock (Client, Virtual) can
-- bring an instant older than one already used, and such a call must still
-- see every entry that shares a window with it; entries newer than the
-- call only make its decision stricter. So calls up to keep(i) older than
-- the newest sweeping call are judged in full.
local function keep(i)
  return math.max(tonumber(ARGV[3 * i + 4]), 1000000)
end

-- A rule is full when its limit-th latest entry is still in the window
-- (check - score < window, half-open); the call may go when that entry
-- leaves. Reading that one entry decides the rule without trimming first,
-- so a refused call writes nothing.
local wait, binding, expired = 0, 0, nil
for i = 1, n do
  local rank = ARGV[3 * i + 3]
  local entry = redis.pcall('ZRANGE', KEYS[i], rank, rank, 'WITHSCORES')
  if entry.err then
    local kind = call('TYPE', KEYS[i])
    return redis.error_reply('WRONGTYPE rlcheck: key ' .. KEYS[i] .. ' holds a ' ..
      tostring(kind.ok or kind) .. ', not the sorted set of a rate rule')
  end
  if entry[2] then
    local w = tonumber(entry[2]) + tonumber(ARGV[3 * i + 4]) - check
    if w > wait then
      wait, binding = w, i
    elseif w <= -keep(i) then
      -- Entries past keeping do not change the decision above; they are
      -- swept when the set holds more than limit of them, or on the
      -- caller's cue.
      expired = expired or {}
      expired[i] = true
    end
  end
end
if wait > 0 then
  return {wait, check, binding}
end

-- The record goes in before the sweep, so a sweep never empties a set:
-- Redis would delete the key, and ZADD would make it again without expiry.
local cue = ARGV[4] == '1'
for i = 1, n do
  local key = KEYS[i]
  if call('ZADD', key, record, ARGV[3]) == 0 then
    return redis.error_reply('rlcheck: member ' .. ARGV[3] .. ' is already in ' .. key ..
      ': limiters sharing a key need distinct member prefixes')
  end
  if cue or (expired and expired[i]) then
    call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', check - tonumber(ARGV[3 * i + 4]) - keep(i)))
  end
end

-- Expiry. A refresh sets every key to expire no sooner than its expiry
-- (window + 2G) from now, never sooner than it already would, and then
-- lets the marker live G. So while the marker lives, every key outlives
-- a record made now by at least its window + G, and one PTTL replaces a
-- PEXPIRE per key. Keys are refreshed after the ZADDs, so none is left
-- without expiry; the marker names the exact keys and expiries it vouches
-- for, so limiters with other rules refresh theirs through their own.
if call('PTTL', KEYS[n + 1]) < 0 then
  for i = 1, n do
    local ttl = ARGV[3 * i + 5]
    if call('PTTL', KEYS[i]) < tonumber(ttl) then
      call('PEXPIRE', KEYS[i], ttl)
    end
  end
  call('SET', KEYS[n + 1], '1', 'PX', ARGV[5])
end
return at
