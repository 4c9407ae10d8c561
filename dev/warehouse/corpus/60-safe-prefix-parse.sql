SELECT SAFE.PARSE_DATE('%Y-%m-%d', raw) AS parsed, raw
FROM UNNEST(['2024-02-29', '2023-02-29', 'not a date']) AS raw
ORDER BY raw
