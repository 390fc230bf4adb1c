# api write path: micro-benchmarks of /incr parsing and encoding. The end-to-end
# load test (wrk against the API and nginx, batched POSTs into realtime, delivery lag) is
# tests/bench/api_write_bench.py.
if(TARGET clickatron_api)
  clickatron_bench(api_write_bench
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/api_write_bench.cc
    LIBS clickatron_api)
endif()
# The floor of the durable single-event path: the API's per-request work and oplog behind
# the smallest HTTP layer (see the file's header). Compared with clickatron-api by
# tests/bench/api_write_bench.py --floor.
if(TARGET clickatron_api)
  clickatron_bench(incr_floor SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/incr_floor.cc LIBS clickatron_api)
endif()
# The idempotency index: heap an entry, and the start-up restore beside the oplog's own
# recovery (docs/benchmarks.md#idempotency-index).
if(TARGET clickatron_api)
  clickatron_bench(idempotency_bench SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/idempotency_bench.cc LIBS clickatron_api)
endif()
