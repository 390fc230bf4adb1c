# realtime benchmark: raw Tokyo Cabinet vs the ring vs clickatron-realtime over HTTP.
if(TARGET clickatron_realtime_server AND CLICKATRON_BENCH)
  clickatron_bench(realtime_bench
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/realtime_bench.cc
    LIBS clickatron_realtime)
  # The daemon without realtime/no_yield.cc: Debian's Tokyo Cabinet yields reach the kernel.
  add_executable(clickatron-realtime-tcyield ${CMAKE_SOURCE_DIR}/realtime/main.cc)
  target_link_libraries(clickatron-realtime-tcyield PRIVATE clickatron_realtime_server clickatron_config Boost::program_options)
endif()
