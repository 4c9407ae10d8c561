SELECT name, ARRAY_LENGTH(SPLIT(name, ' ')) AS words, SPLIT(name, ' ')[ORDINAL(1)] AS first_word
FROM `service-v1.acme.dim__products`
ORDER BY words DESC, name
LIMIT 10
