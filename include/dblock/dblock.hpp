// dblock/dblock.hpp — umbrella header for the core API and dblock::open(url).
// attach() and within() for each client library live in dblock/pqxx.hpp, dblock/mysql.hpp, dblock/soci.hpp.
#pragma once

#include "dblock/database.hpp"
#include "dblock/election.hpp"
#include "dblock/errors.hpp"
#include "dblock/idempotency.hpp"
#include "dblock/lock.hpp"
#include "dblock/metrics.hpp"
#include "dblock/multi_lock.hpp"
#include "dblock/open.hpp"
#include "dblock/reaper.hpp"
#include "dblock/replication.hpp"
#include "dblock/session_lock.hpp"
#include "dblock/optimistic.hpp"
#include "dblock/retry.hpp"
#include "dblock/row_guard.hpp"
#include "dblock/transaction.hpp"
#include "dblock/url.hpp"
#include "dblock/util.hpp"
#include "dblock/value.hpp"
#include "dblock/version.hpp"
