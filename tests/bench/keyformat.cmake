# keyformat micro-benchmarks: YMDH encode, key build, multi-column parse.
clickatron_bench(keyformat_bench
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/keyformat_bench.cc
  LIBS clickatron_keyformat)
