-- The example's own schema (applied with database::migrate_dir under scope "orders_example").
-- order_no and payment_id are the dedup keys: insert_or_lock needs them unique.
CREATE TABLE orders (
  order_no     VARCHAR(64)  NOT NULL PRIMARY KEY,
  customer     VARCHAR(128) NOT NULL,
  amount_cents BIGINT       NOT NULL
);
CREATE TABLE payments (
  payment_id   VARCHAR(64)  NOT NULL PRIMARY KEY,
  order_no     VARCHAR(64)  NOT NULL,
  amount_cents BIGINT       NOT NULL,
  status       VARCHAR(16)  NOT NULL,
  captured_by  VARCHAR(64),
  version      BIGINT       NOT NULL DEFAULT 0,
  FOREIGN KEY (order_no) REFERENCES orders (order_no)
);
