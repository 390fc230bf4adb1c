# net/: micro benchmarks of the per-request work (query parse, JSON escape, latency record).
# The HTTP load comparison against nginx is tests/bench/net_http.sh (wrk, release build).
if(TARGET clickatron_net)
  clickatron_bench(net_bench SOURCES ${CMAKE_CURRENT_LIST_DIR}/net_bench.cc LIBS clickatron_net)
endif()
