# oplog: append rates of the three sync policies beside raw write and fdatasync rates, and
# append-to-durable latency of `batch` at a paced 300k records/s. docs/benchmarks.md#oplog.
clickatron_bench(oplog_bench SOURCES oplog_bench.cc LIBS clickatron_oplog)
# The codec of the oplog's compressed batches against the others:
# docs/benchmarks.md#oplog-compression.
# lz4 is a benchmark-only dependency (ops/install-deps bench_packages).
pkg_check_modules(LZ4 IMPORTED_TARGET liblz4)
if(LZ4_FOUND)
  clickatron_bench(oplog_codec_bench SOURCES oplog_codec_bench.cc
    LIBS clickatron_oplog PkgConfig::LZ4 PkgConfig::ZSTD)
endif()
