-- rlcheck: check every rule of one limiter, then record the call in all of
-- them or in none. One sorted set per rule (KEYS[1..n]); scores are integer
-- microseconds and every call brings a member of its own. KEYS[n+1] is the
-- expiry marker of this exact set of keys and expiries; KEYS[n+2] is the
-- sentinel of this limiter's member prefix, which says its state is there.
--
-- ARGV[1] check time, ARGV[2] record time, both integer microseconds, or
--   both empty to read the server clock (TIME) here;
-- ARGV[3] the call's member;
-- ARGV[4] '1' to sweep every set of its expired entries and look for
--   entries from the far future, else '0';
-- ARGV[5] the marker's lease G in milliseconds;
-- ARGV[6] '1' when the caller knows its sentinel must exist, else '0';
-- ARGV[7] '1' to set the sentinel for ARGV[8] ms when the call is recorded;
-- ARGV[9] the largest skew in microseconds allowed between a caller's
--   check time and TIME, or empty for no check;
-- ARGV[10] how far ahead of the check time, in microseconds, an entry may
--   lie before the set counts as corrupt;
-- ARGV[11] empty when any entry of the call's member is this call's own
--   (the prefix is random); else, for server time, how many microseconds
--   after its own record a retry of the call may run;
-- then per rule i: ARGV[3i+9] minus its limit (the rank to read),
--   ARGV[3i+10] window in microseconds, ARGV[3i+11] key expiry in ms.
-- Reply: the record time when the call is recorded (now, or by an earlier
-- attempt of the same call); else {wait, check, rule}: nothing was
-- written, and rule i asks for the longest wait. Errors start with a code
-- the client maps: WRONGTYPE, SKEW, CORRUPT, LOST, CLASH.
--
-- Lua numbers are doubles: epoch microseconds (< 2^53) are exact in them,
-- but Lua's tostring and '..' print only 14 significant digits, and
-- redis.call prints a number argument with printf (slow, and changed
-- between Redis versions); so every value goes to Redis as a string, times
-- made with %d.
local call = redis.call
local n = #KEYS - 2
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
  if ARGV[9] ~= '' then
    local t = call('TIME')
    local skew = check - (t[1] * 1000000 + t[2])
    if math.abs(skew) > tonumber(ARGV[9]) then
      local way = 'ahead of'
      if skew < 0 then way = 'behind' end
      return redis.error_reply(string.format('SKEW the client clock is %d µs %s Redis TIME, more than the %d µs allowed',
        math.abs(skew), way, tonumber(ARGV[9])))
    end
  end
end

-- The sentinel lives as long as recent admissions of this prefix need it;
-- its absence while the caller counts on it means the state was lost
-- (FLUSHALL, eviction, a failover to a replica that lacked it). It is
-- looked at only when the expiry marker is gone, once a lease: a lost
-- state has lost its marker too.
local fresh = call('PTTL', KEYS[n + 1]) >= 0
if not fresh and ARGV[6] == '1' and call('EXISTS', KEYS[n + 2]) == 0 then
  return redis.error_reply('LOST ' .. KEYS[n + 2] .. ' is gone while this limiter holds recent admissions: ' ..
    'the limiter state was flushed, evicted or lost in a failover')
end

-- An earlier attempt of this very call (a retry after a lost reply) may
-- have recorded it already: then report that record. The member's entry
-- is the call's own when the prefix is random, when its score is the
-- caller-supplied record time, or, for server time, when it is recent
-- enough to be a retry's.
local function earlier()
  local s = call('ZSCORE', KEYS[1], ARGV[3])
  if not s then return nil end
  s = tonumber(s)
  if ARGV[11] == '' or (ARGV[1] ~= '' and s == at) or
      (ARGV[1] == '' and s <= check and check - s <= tonumber(ARGV[11])) then
    if ARGV[7] == '1' then
      call('SET', KEYS[n + 2], '1', 'PX', ARGV[8])
    end
    return s
  end
  return redis.error_reply('CLASH member ' .. ARGV[3] .. ' is already in ' .. KEYS[1] ..
    ' from another call: limiters sharing a key need distinct member prefixes')
end

-- A sweep removes only entries older than the window plus keep(i): the
-- window again, and at least 1 s. A caller's clock (Client, Virtual) can
-- bring an instant older than one already used, and such a call must still
-- see every entry that shares a window with it; entries newer than the
-- call only make its decision stricter. So calls up to keep(i) older than
-- the newest sweeping call are judged in full.
local function keep(i)
  return math.max(tonumber(ARGV[3 * i + 10]), 1000000)
end

-- No entry belongs further ahead of the check time than ARGV[10]: one that
-- does was written by a broken clock or by hand, and would hold the rule
-- full for as long as it lies ahead.
local ahead = tonumber(ARGV[10])
local function corrupt(key, score)
  return redis.error_reply(string.format('CORRUPT key %s holds an entry at %d µs, %d s ahead of the script clock (%d µs): delete the key',
    key, tonumber(score), math.floor((tonumber(score) - check) / 1000000), check))
end

-- A rule is full when its limit-th latest entry is still in the window
-- (check - score < window, half-open); the call may go when that entry
-- leaves. Reading that one entry decides the rule without trimming first,
-- so a refused call writes nothing.
local cue = ARGV[4] == '1'
local wait, binding, expired = 0, 0, nil
for i = 1, n do
  local rank = ARGV[3 * i + 9]
  local entry = redis.pcall('ZRANGE', KEYS[i], rank, rank, 'WITHSCORES')
  if entry.err then
    local kind = call('TYPE', KEYS[i])
    return redis.error_reply('WRONGTYPE rlcheck: key ' .. KEYS[i] .. ' holds a ' ..
      tostring(kind.ok or kind) .. ', not the sorted set of a rate rule')
  end
  if entry[2] then
    local score = tonumber(entry[2])
    if score - check > ahead then
      return corrupt(KEYS[i], entry[2])
    end
    local w = score + tonumber(ARGV[3 * i + 10]) - check
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
  if cue then
    local last = call('ZRANGE', KEYS[i], -1, -1, 'WITHSCORES')
    if last[2] and tonumber(last[2]) - check > ahead then
      return corrupt(KEYS[i], last[2])
    end
  end
end
if wait > 0 then
  local s = earlier()
  if s then return s end
  return {wait, check, binding}
end

-- The record goes in before the sweep, so a sweep never empties a set:
-- Redis would delete the key, and ZADD would make it again without expiry.
for i = 1, n do
  local key = KEYS[i]
  if call('ZADD', key, 'NX', record, ARGV[3]) == 0 then
    if i == 1 then
      return earlier()
    end
    return redis.error_reply('CLASH member ' .. ARGV[3] .. ' is already in ' .. key ..
      ': limiters sharing a key need distinct member prefixes')
  end
  if cue or (expired and expired[i]) then
    call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', check - tonumber(ARGV[3 * i + 10]) - keep(i)))
  end
end
if ARGV[7] == '1' then
  call('SET', KEYS[n + 2], '1', 'PX', ARGV[8])
end

-- Expiry. A refresh sets every key to expire no sooner than its expiry
-- (window + 2G) from now, never sooner than it already would, and then
-- lets the marker live G. So while the marker lives, every key outlives
-- a record made now by at least its window + G, and one PTTL replaces a
-- PEXPIRE per key. Keys are refreshed after the ZADDs, so none is left
-- without expiry; the marker names the exact keys and expiries it vouches
-- for, so limiters with other rules refresh theirs through their own.
if not fresh then
  for i = 1, n do
    local ttl = ARGV[3 * i + 11]
    if call('PTTL', KEYS[i]) < tonumber(ttl) then
      call('PEXPIRE', KEYS[i], ttl)
    end
  end
  call('SET', KEYS[n + 1], '1', 'PX', ARGV[5])
end
return at
