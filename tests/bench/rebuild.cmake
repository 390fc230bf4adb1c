# rebuild benchmark: a generator of realistic realtime records for the
# import + merge benchmark against GNU sort (tests/bench/rebuild_bench.sh, docs/benchmarks.md).
clickatron_bench(rebuild_gen
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/rebuild_gen.cc
  LIBS clickatron_keyformat)
