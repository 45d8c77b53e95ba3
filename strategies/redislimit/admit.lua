-- rlcheck: check every rule of one limiter, then record the call in all of
-- them or in none. One key per rule (KEYS[1..n]): a sorted set for an exact
-- rule, whose scores are integer microseconds and where every call brings a
-- member of its own; a hash of bucket counts for a bucketed rule (see
-- "Bucketed rules" below). KEYS[n+1] is the
-- expiry marker of this exact set of keys and expiries; KEYS[n+2] is the
-- sentinel of the key name: the number of calls recorded since the state
-- was made, which says the state is there and how recent it is, or 'lost'
-- while every limiter of the key is held back after a loss.
--
-- Each limiter runs a copy of this script whose block between BEGIN
-- CONSTANTS and END CONSTANTS, and the line marked "key expiries", say
-- where its values are (limiter.go): the copy holds only the shape of the
-- configuration (time source, number of rules, which are bucketed, which
-- key tells a retry), so limiters of any limits share the copy of their
-- shape, and the values (limits, windows, widths, expiries, bounds) come
-- in ARGV from 7 on. The block below is an example with the values written
-- in: rules 2^30/1s, 2^30/1m, 2^30/1h, exact, server time. The keys and
-- what they hold do not depend on the copy: limiters of other versions
-- that share a key count together with this one.
--
-- ARGV[1] the call's member;
-- ARGV[2] '1' to sweep every set of its expired entries and look for
--   entries from the far future, else '0';
-- ARGV[3] the sentinel's count as the caller last saw it while the
--   caller knows the sentinel must exist, else '0';
-- ARGV[4] '1' to make the sentinel live at least sentinelTTL ms when the
--   call is recorded;
-- ARGV[5] check time, ARGV[6] record time, both integer microseconds, or
--   both empty when the script reads the server clock (TIME);
-- ARGV[7] on: the values the constants block names.
-- Reply: {record time, sentinel count} when the call is recorded (now,
-- or by an earlier attempt of the same call); else {wait, check, rule,
-- sentinel count}: nothing was written, and rule i asks for the longest
-- wait. Errors start with a code the client maps: WRONGTYPE, SKEW,
-- CORRUPT, LOST, HELD, CLASH.
--
-- Lua numbers are doubles: epoch microseconds (< 2^53) are exact in them,
-- but Lua's tostring and '..' print only 14 significant digits, and
-- redis.call prints a number argument with printf (slow, and changed
-- between Redis versions); so every value goes to Redis as a string, times
-- made with %d.

-- BEGIN CONSTANTS
-- serverTime: read TIME, else ARGV[5] and ARGV[6]; maxSkew: the largest
-- skew in microseconds allowed between a caller's check time and TIME, or
-- nil for no check; ahead: how far ahead of the check time, in
-- microseconds, an entry may lie before the set counts as corrupt; retry:
-- nil when any entry of the call's member is this call's own (the prefix
-- is random), else, for server time, how many microseconds after its own
-- record a retry of the call may run; lease: the marker's lease in ms;
-- idem: the rule whose key tells whether this very call was recorded (the
-- first exact rule, else 0: the first rule's hash remembers the last
-- member it counted); hold: how long, in ms, every limiter of the key is
-- held back after a loss (the longest key life). Per rule i: R[i] minus its limit as a string (the
-- rank to read) for an exact rule, its limit for a bucketed one; W[i] its
-- window in microseconds; G[i] its bucket width in microseconds, or 0 for
-- an exact rule.
local serverTime, maxSkew, ahead, retry = true, nil, 3660000000, nil
local lease, sentinelTTL, idem, hold = '1000', '3602000', 1, '3602000'
local R = {'-1073741824', '-1073741824', '-1073741824'}
local W = {1000000, 60000000, 3600000000}
local G = {0, 0, 0}
-- END CONSTANTS

local call = redis.call
local n = #KEYS - 2
local check, record, at
if serverTime then
  local t = call('TIME')
  check = t[1] * 1000000 + t[2]
  record = string.format('%d', check)
  at = check
else
  check = tonumber(ARGV[5])
  record = ARGV[6]
  at = tonumber(record)
  if maxSkew then
    local t = call('TIME')
    local skew = check - (t[1] * 1000000 + t[2])
    if math.abs(skew) > maxSkew then
      local way = 'ahead of'
      if skew < 0 then way = 'behind' end
      return redis.error_reply(string.format('SKEW the client clock is %d µs %s Redis TIME, more than the %d µs allowed',
        math.abs(skew), way, maxSkew))
    end
  end
end

-- The sentinel counts the calls recorded under the key and lives as long
-- as recent admissions need it. Its absence while the caller counts on it
-- means the state was lost (FLUSHALL, eviction, a restart without the
-- data, a failover to a replica that lacked it); a count below the one
-- the caller saw means it was restored from an older snapshot. Either
-- way every limiter of the key is held back for hold ms, by which time
-- no call recorded before the loss is in any window: the sentinel holds
-- 'lost' until then.
local fresh = call('PTTL', KEYS[n + 1]) >= 0
local live = call('GET', KEYS[n + 2])
if live == 'lost' then
  return redis.error_reply('HELD ' .. KEYS[n + 2] .. ' holds every limiter of the key back for ' ..
    call('PTTL', KEYS[n + 2]) .. ' ms more, after a limiter found the state lost or restored from an older snapshot')
end
if ARGV[3] ~= '0' then
  local why
  if not live then
    why = ' is gone'
  elseif (tonumber(live) or 0) < tonumber(ARGV[3]) then
    why = ' counts ' .. live .. ' calls where this limiter saw ' .. ARGV[3]
  end
  if why then
    call('SET', KEYS[n + 2], 'lost', 'PX', hold)
    return redis.error_reply('LOST ' .. KEYS[n + 2] .. why .. ' while this limiter holds recent admissions: ' ..
      'the limiter state was flushed, evicted, lost in a restart or failover, or restored from an older snapshot')
  end
end
live = tonumber(live) or 0

local lastMember -- field m of the first rule, read when every rule is bucketed

-- An earlier attempt of this very call (a retry after a lost reply) may
-- have recorded it already: then report that record. The member's entry
-- is the call's own when the prefix is random, when its score is the
-- caller-supplied record time, or, for server time, when it is recent
-- enough to be a retry's. A bucketed hash remembers only the last member,
-- so a retry that comes after another call of the key counts again:
-- capacity spent without a send, never the reverse.
--
-- Every local a function uses from outside it (an upvalue) costs each run
-- that makes the function, used or not: so the functions of rare paths
-- here take what they need as arguments and reach Redis through globals.
local function earlier(lastMember, at, check, idem, retry, serverTime, sentinelTTL)
  local s
  if idem > 0 then
    s = redis.call('ZSCORE', KEYS[idem], ARGV[1])
  elseif lastMember == ARGV[1] then
    s = redis.call('HGET', KEYS[1], 'a')
  end
  if not s then return nil end
  s = tonumber(s)
  if not retry or (not serverTime and s == at) or
      (serverTime and s <= check and check - s <= retry) then
    if ARGV[4] == '1' and redis.call('PTTL', KEYS[#KEYS]) < tonumber(sentinelTTL) then
      redis.call('PEXPIRE', KEYS[#KEYS], sentinelTTL)
    end
    return s
  end
  return redis.error_reply('CLASH member ' .. ARGV[1] .. ' is already in ' .. KEYS[math.max(idem, 1)] ..
    ' from another call: limiters sharing a key need distinct member prefixes')
end

-- A sweep removes only entries older than the window plus keep. A
-- caller's clock (Client, Virtual) can bring an instant older than one
-- already used, and such a call must still see every entry that shares a
-- window with it; entries newer than the call only make its decision
-- stricter. So there keep is the window again, and at least 1 s: calls
-- up to that much older than the newest sweeping call are judged in full.
-- Under server time every call is judged at TIME, which only a clock step
-- sets back: 1 s covers it, and a day's set keeps one day, not two.

-- No entry belongs further ahead of the check time than ahead: one that
-- does was written by a broken clock or by hand, and would hold the rule
-- full for as long as it lies ahead.
local format = string.format
local function corrupt(key, score, check)
  return redis.error_reply(string.format('CORRUPT key %s holds an entry at %d µs, %d s ahead of the script clock (%d µs): delete the key',
    key, tonumber(score), math.floor((tonumber(score) - check) / 1000000), check))
end
local function wrongType(i, want)
  local kind = redis.call('TYPE', KEYS[i])
  return redis.error_reply('WRONGTYPE rlcheck: key ' .. KEYS[i] .. ' holds a ' ..
    tostring(kind.ok or kind) .. ', not the ' .. want .. ' of a rate rule')
end

-- Bucketed rules. Bucket b counts the calls recorded in [b*g, (b+1)*g)
-- µs, g the rule's bucket width; the calls in the window (t-W, t] all lie
-- in the buckets floor((t-W)/g) to floor(t/g), so their sum bounds the
-- window's count, and the rule is full when it reaches the limit. The
-- hash holds t, the total over the buckets f (the oldest still in the
-- bound) to l (the newest counted); c, the count of bucket l; the counts
-- of the older buckets under their bucket numbers; m and a, the last
-- member counted and its record time. A bucket that leaves the bound is
-- subtracted from t and deleted on the next record, so a call reads and
-- writes a few fields whatever the bucket count. A call whose window
-- starts before f (an instant older than one already used) waits until it
-- starts at f: the counts before it are gone.
--
-- Every Lua step, table, new string and redis.call costs here
-- (docs/benchmarks.md), so the common path is written out inline:
-- one HMGET and one HSET per bucketed rule, of fields that sit at the head
-- of the hash's listpack (Redis finds a field by scanning it, and a
-- bucket number added last sits at its tail). A table per rule is made
-- only where buckets leave the bound, the call is not in the newest
-- bucket or the rule is full, and those read and delete buckets in
-- chunks, as unpack takes a bounded number of values.
-- fields and sum write this 1000 (and 999) out rather than capture
-- chunk, which every run would pay for: change all of them together.
local chunk = 1000
-- fields names the buckets from to to, at most chunk of them.
local function fields(from, to)
  local f = {}
  for b = from, math.min(to, from + 999) do
    f[#f + 1] = string.format('%d', b)
  end
  return f
end
-- sum adds the counts of buckets from to to of a hash whose bucket l
-- (counted in c) is last: all of them, or, given need, only until they
-- reach it, then also returning the bucket where they did. With need it
-- reads 4 buckets first, then 4 times as many each time: the wait of a
-- full rule usually lies in its oldest buckets, and each name read costs.
local function sum(key, from, to, last, c, need)
  local acc = 0
  local top = math.min(to, last - 1)
  local size = 1000 -- chunk
  if need then size = 4 end
  local lo = from
  while lo <= top do
    local hi = math.min(top, lo + size - 1)
    local got = redis.call('HMGET', key, unpack(fields(lo, hi)))
    for j = 1, #got do
      acc = acc + (tonumber(got[j]) or 0)
      if need and acc >= need then return acc, lo + j - 1 end
    end
    lo = hi + 1
    size = math.min(size * 4, 1000)
  end
  if to >= last then acc = acc + c end
  return acc, last
end
-- Per bucketed rule, what the record needs. On the common path (the call
-- falls in the newest bucket l, and the bound neither starts nor moves)
-- its total and l's count, in totals and counts; else {first, old first,
-- last, its field, its count, total, the call's bucket, its count,
-- dropped to} in buckets, a table per rule.
local buckets, totals, counts

-- An exact rule is full when its limit-th latest entry is still in the
-- window (check - score < window, half-open); the call may go when that
-- entry leaves. Reading that one entry decides the rule without trimming
-- first, so a refused call writes nothing.
local cue = ARGV[2] == '1'
local wait, binding, expired = 0, 0, nil
for i = 1, n do
  local key, w, g = KEYS[i], W[i], G[i]
  if g ~= 0 then
    -- Lua's a % b is a - floor(a / b) * b: exact here, since |a| + b
    -- stays below 2^53 (epoch microseconds and windows up to a century),
    -- where a / b cannot round up to the next integer; and in [0, b)
    -- for negative a too (virtual time near zero).
    local x = check - w
    local lo = (x - x % g) / g
    local cur = (at - at % g) / g
    if cur < lo then cur = lo end
    local h
    if i == 1 and idem == 0 then
      h = redis.pcall('HMGET', key, 't', 'f', 'l', 'c', 'm')
      if not h.err then lastMember = h[5] end
    else
      h = redis.pcall('HMGET', key, 't', 'f', 'l', 'c')
    end
    if h.err then return wrongType(i, 'hash of bucket counts') end
    -- The fields hold integers this script wrote; '+ 0' converts them
    -- as tonumber does, without a function call, and ends the script
    -- with an error on a field that is not a number (written by hand).
    local total, old, last, c = h[1], h[2], h[3], h[4]
    if total then total = total + 0 else total = 0 end
    if old then old = old + 0 end
    if last then last = last + 0 else last = lo - 1 end
    if c then c = c + 0 else c = 0 end
    -- 'nan' and 'inf' convert too; x - x is 0 only for a finite x.
    local probe = total + last + c + (old or 0)
    if probe - probe ~= 0 then
      return redis.error_reply('CORRUPT key ' .. key .. ' holds a bucket field that is not a finite number: delete the key')
    end
    local first = old or lo
    if last * g - check > ahead then
      return corrupt(key, format('%d', last * g), check)
    end
    if lo < first then
      local rw = first * g + w - check
      if rw > wait then wait, binding = rw, i end
    else
      local dropTo
      if first < lo then
        dropTo = math.min(lo - 1, last)
        total = total - sum(key, first, dropTo, last, c)
        first = lo
      end
      local count = 0
      if cur == last then
        count = c
      elseif cur < last then -- an instant older than one already counted
        count = tonumber(call('HGET', key, format('%d', cur))) or 0
      end
      if cur == last and old and not dropTo then
        totals, counts = totals or {}, counts or {}
        totals[i], counts[i] = total, c
      else
        buckets = buckets or {}
        buckets[i] = {first, old, last, h[3], c, total, cur, count, dropTo}
      end
      local limit = R[i]
      if total >= limit then
        -- The wait ends when the oldest buckets holding total - limit + 1
        -- calls leave; when the older ones hold fewer, that is bucket l,
        -- with nothing to read.
        local need, b = total - limit + 1, last
        if total - c >= need then
          local _
          _, b = sum(key, first, last, last, c, need)
        end
        local rw = (b + 1) * g + w - check
        if rw > wait then wait, binding = rw, i end
      end
    end
  else
    local rank = R[i]
    local entry = redis.pcall('ZRANGE', key, rank, rank, 'WITHSCORES')
    if entry.err then
      return wrongType(i, 'sorted set')
    end
    if entry[2] then
      local score = tonumber(entry[2])
      if score - check > ahead then
        return corrupt(key, entry[2], check)
      end
      local rw = score + w - check
      if rw > wait then
        wait, binding = rw, i
      elseif (serverTime and rw <= -1000000) or (not serverTime and rw <= -math.max(w, 1000000)) then
        -- Entries past keeping do not change the decision above; they are
        -- swept when the set holds more than limit of them, or on the
        -- caller's cue.
        expired = expired or {}
        expired[i] = true
      end
    end
    if cue then
      local last = call('ZRANGE', key, -1, -1, 'WITHSCORES')
      if last[2] and tonumber(last[2]) - check > ahead then
        return corrupt(key, last[2], check)
      end
    end
  end
end
if wait > 0 then
  local s = earlier(lastMember, at, check, idem, retry, serverTime, sentinelTTL)
  if type(s) == 'number' then return {s, live} end
  if s then return s end
  return {wait, check, binding, live}
end
if idem == 0 and lastMember == ARGV[1] then
  local s = earlier(lastMember, at, check, idem, retry, serverTime, sentinelTTL)
  if type(s) == 'number' then return {s, live} end
  if s then return s end
end

-- The record goes in before the sweep, so a sweep never empties a set:
-- Redis would delete the key, and ZADD would make it again without expiry.
-- The rule that tells a retry goes first, so a retry finds its record
-- before counting anything twice.
for j = 0, n do
  local i = j
  if j == 0 then i = idem end
  if i > 0 and (j == 0 or i ~= idem) then
    local key = KEYS[i]
    local b = buckets and buckets[i]
    local total = totals and totals[i]
    if total then
      -- One HSET: the count of l, the total, and the member that tells a
      -- retry when every rule is bucketed.
      local count = format('%d', counts[i] + 1)
      total = format('%d', total + 1)
      if i ~= 1 or idem > 0 then
        call('HSET', key, 'c', count, 't', total)
      else
        call('HSET', key, 'c', count, 't', total, 'm', ARGV[1], 'a', record)
      end
    elseif b then
      -- One HSET: the call's bucket, the total, the bound's ends when they
      -- moved, and the member that tells a retry when every rule is
      -- bucketed. A call in a bucket after l moves c to l's own field.
      local first, old, last, cur = b[1], b[2], b[3], b[7]
      if b[9] then
        for from = old, math.min(b[9], last - 1), chunk do
          call('HDEL', key, unpack(fields(from, math.min(b[9], last - 1))))
        end
      end
      local total, count = format('%d', b[6] + 1), format('%d', b[8] + 1)
      local set
      if cur == last then -- the bound starts or moves: first ~= old
        set = {'c', count, 't', total}
      elseif cur > last then
        set = {'c', count, 'l', format('%d', cur), 't', total}
        if last >= first then
          set[7] = b[4]
          set[8] = format('%d', b[5])
        end
      else
        set = {format('%d', cur), count, 't', total}
      end
      if first ~= old then
        set[#set + 1] = 'f'
        set[#set + 1] = format('%d', first)
      end
      if i == 1 and idem == 0 then
        set[#set + 1] = 'm'
        set[#set + 1] = ARGV[1]
        set[#set + 1] = 'a'
        set[#set + 1] = record
      end
      call('HSET', key, unpack(set))
    else
      if call('ZADD', key, 'NX', record, ARGV[1]) == 0 then
        if i == idem then
          local s = earlier(lastMember, at, check, idem, retry, serverTime, sentinelTTL)
          if type(s) == 'number' then return {s, live} end
          if s then return s end
        end
        return redis.error_reply('CLASH member ' .. ARGV[1] .. ' is already in ' .. key ..
          ': limiters sharing a key need distinct member prefixes')
      end
      if cue or (expired and expired[i]) then
        local w = W[i]
        local keep = 1000000
        if not serverTime then keep = math.max(w, 1000000) end
        call('ZREMRANGEBYSCORE', key, '-inf', format('%d', check - w - keep))
      end
    end
  end
end
live = call('INCR', KEYS[n + 2])
if live == 1 or ARGV[4] == '1' then
  if call('PTTL', KEYS[n + 2]) < tonumber(sentinelTTL) then
    call('PEXPIRE', KEYS[n + 2], sentinelTTL)
  end
end

-- Expiry. A refresh sets every key to expire no sooner than its expiry
-- (window + 2G) from now, never sooner than it already would, and then
-- lets the marker live G. So while the marker lives, every key outlives
-- a record made now by at least its window + G, and one PTTL replaces a
-- PEXPIRE per key. Keys are refreshed after the ZADDs, so none is left
-- without expiry; the marker names the exact keys and expiries it vouches
-- for, so limiters with other rules refresh theirs through their own.
if not fresh then
  local T = {'3000', '62000', '3602000'} -- key expiries
  for i = 1, n do
    local ttl = T[i]
    if call('PTTL', KEYS[i]) < tonumber(ttl) then
      call('PEXPIRE', KEYS[i], ttl)
    end
  end
  call('SET', KEYS[n + 1], '1', 'PX', lease)
end
return {at, live}
