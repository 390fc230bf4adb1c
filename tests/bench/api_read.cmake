# clickatron-api read path: the load benchmark is the script
# tests/bench/api_read_load.sh (data from api_read_gen.py, wrk + api_read_wrk.lua, with nginx
# and the archive's own /get measured in the same run), plus http_rate, the open-loop load
# generator its "series-rate" run uses for latency at a fixed offered rate.
# Results: docs/benchmarks.md.
if(CLICKATRON_BENCH)
  add_executable(http_rate ${CMAKE_CURRENT_SOURCE_DIR}/http_rate.cc)
endif()
# The /series answer's JSON: net/'s hand-written writer against rapidjson's Writer.
if(TARGET clickatron_api)
  clickatron_bench(series_json_bench SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/series_json_bench.cc LIBS clickatron_api)
  if(TARGET series_json_bench)
    target_include_directories(series_json_bench SYSTEM PRIVATE ${RAPIDJSON_INCLUDE_DIR})
  endif()
endif()
