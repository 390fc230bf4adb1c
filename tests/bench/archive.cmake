# clickatron-archive benchmarks: lookup micro-benchmarks here; the HTTP load test
# against nginx is the script tests/bench/archive_load.sh (wrk + archive_wrk.lua).
if(TARGET clickatron_archive_core)
  clickatron_bench(archive_bench
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/archive_bench.cc
    LIBS clickatron_archive_core)
endif()
