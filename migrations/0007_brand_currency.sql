-- brands.currency: the ISO 4217 code (e.g. USD) the brand's money columns are in, so an assistant knows it before
-- it reads a row and never adds amounts across brands blindly. NULL = not recorded (list_brands says null).
-- Written by the admin CLI (`brand create|update --currency`); read by the Worker with the catalog snapshot.
ALTER TABLE brands ADD COLUMN currency TEXT;
