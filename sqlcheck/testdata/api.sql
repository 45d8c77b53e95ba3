-- rlcheck: 3 rules, half-open windows, times in ms, integer arithmetic.
-- rule 0: 10/1s: send i breaks it when t_i - t_{i-10} <= 999.
-- rule 1: 500/1m: send i breaks it when t_i - t_{i-500} <= 59999.
-- rule 2: 10000/24h: send i breaks it when t_i - t_{i-10000} <= 86399999.
WITH src AS (
  SELECT COALESCE(CAST(tenant AS VARCHAR), '') AS k, CAST(ts_ms AS BIGINT) AS t, CAST(line AS BIGINT) AS tb
  FROM sends
),
s AS (
  SELECT k, t, tb AS ref,
    row_number() OVER (PARTITION BY k ORDER BY t, tb) - 1 AS i,
    count(*) OVER (PARTITION BY k ORDER BY t) AS cum,
    t - lag(t, 10) OVER (PARTITION BY k ORDER BY t, tb) AS d0,
    t - lag(t, 500) OVER (PARTITION BY k ORDER BY t, tb) AS d1,
    t - lag(t, 10000) OVER (PARTITION BY k ORDER BY t, tb) AS d2,
    count(*) OVER (PARTITION BY k ORDER BY t RANGE BETWEEN 999 PRECEDING AND CURRENT ROW) AS c0,
    count(*) OVER (PARTITION BY k ORDER BY t RANGE BETWEEN 59999 PRECEDING AND CURRENT ROW) AS c1,
    count(*) OVER (PARTITION BY k ORDER BY t RANGE BETWEEN 86399999 PRECEDING AND CURRENT ROW) AS c2
  FROM src
),
s2 AS (
  SELECT k, t, ref, i,
    CASE WHEN d0 <= 999 THEN 1 ELSE 0 END AS v0,
    CASE WHEN d1 <= 59999 THEN 1 ELSE 0 END AS v1,
    CASE WHEN d2 <= 86399999 THEN 1 ELSE 0 END AS v2,
    c0, cum - c0 AS lo0,
    CASE WHEN c0 > COALESCE(max(c0) OVER (PARTITION BY k ORDER BY i ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) THEN 1 ELSE 0 END AS up0,
    c1, cum - c1 AS lo1,
    CASE WHEN c1 > COALESCE(max(c1) OVER (PARTITION BY k ORDER BY i ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) THEN 1 ELSE 0 END AS up1,
    c2, cum - c2 AS lo2,
    CASE WHEN c2 > COALESCE(max(c2) OVER (PARTITION BY k ORDER BY i ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) THEN 1 ELSE 0 END AS up2
  FROM s
),
a AS (
  SELECT k, count(*) AS sends, min(t) AS first_t, max(t) AS last_t,
    CAST(sum(v0) AS BIGINT) AS n0, min(CASE WHEN v0 = 1 THEN i END) AS fi0, min(CASE WHEN v0 = 1 THEN lo0 END) AS fs0,
    CAST(sum(v1) AS BIGINT) AS n1, min(CASE WHEN v1 = 1 THEN i END) AS fi1, min(CASE WHEN v1 = 1 THEN lo1 END) AS fs1,
    CAST(sum(v2) AS BIGINT) AS n2, min(CASE WHEN v2 = 1 THEN i END) AS fi2, min(CASE WHEN v2 = 1 THEN lo2 END) AS fs2,
    max(c0) AS mx0, max(CASE WHEN up0 = 1 THEN lo0 END) AS ms0,
    max(c1) AS mx1, max(CASE WHEN up1 = 1 THEN lo1 END) AS ms1,
    max(c2) AS mx2, max(CASE WHEN up2 = 1 THEN lo2 END) AS ms2
  FROM s2 GROUP BY k
),
want AS (
  SELECT k, fi0 AS i FROM a
  UNION
  SELECT k, fs0 FROM a
  UNION
  SELECT k, fi1 AS i FROM a
  UNION
  SELECT k, fs1 FROM a
  UNION
  SELECT k, fi2 AS i FROM a
  UNION
  SELECT k, fs2 FROM a
  UNION
  SELECT k, ms0 FROM a
  UNION
  SELECT k, ms1 FROM a
  UNION
  SELECT k, ms2 FROM a
),
d AS (
  SELECT s2.k, s2.i, s2.t, s2.ref FROM s2 JOIN want ON s2.k = want.k AND s2.i = want.i
)
SELECT a.k AS key, 0 AS rule_index, '10/1s' AS rule, a.sends AS sends, a.first_t AS first_t, a.last_t AS last_t, a.n0 AS violations, a.fi0 AS first_index, f.t AS first_t_violation, f.ref AS first_ref, a.fs0 AS first_window_index, fs.t AS first_window_t, fs.ref AS first_window_ref, a.mx0 AS max_in_window, ms.t AS max_window_t, ms.ref AS max_window_ref
FROM a
  LEFT JOIN d f ON f.k = a.k AND f.i = a.fi0
  LEFT JOIN d fs ON fs.k = a.k AND fs.i = a.fs0
  LEFT JOIN d ms ON ms.k = a.k AND ms.i = a.ms0
UNION ALL
SELECT a.k, 1, '500/1m', a.sends, a.first_t, a.last_t, a.n1, a.fi1, f.t, f.ref, a.fs1, fs.t, fs.ref, a.mx1, ms.t, ms.ref
FROM a
  LEFT JOIN d f ON f.k = a.k AND f.i = a.fi1
  LEFT JOIN d fs ON fs.k = a.k AND fs.i = a.fs1
  LEFT JOIN d ms ON ms.k = a.k AND ms.i = a.ms1
UNION ALL
SELECT a.k, 2, '10000/24h', a.sends, a.first_t, a.last_t, a.n2, a.fi2, f.t, f.ref, a.fs2, fs.t, fs.ref, a.mx2, ms.t, ms.ref
FROM a
  LEFT JOIN d f ON f.k = a.k AND f.i = a.fi2
  LEFT JOIN d fs ON fs.k = a.k AND fs.i = a.fs2
  LEFT JOIN d ms ON ms.k = a.k AND ms.i = a.ms2
ORDER BY 1, 2;
