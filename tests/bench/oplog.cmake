# oplog: append rates of the three sync policies beside raw write and fdatasync rates, and
# append-to-durable latency of `batch` at a paced 300k records/s. docs/benchmarks.md#oplog.
clickatron_bench(oplog_bench SOURCES oplog_bench.cc LIBS clickatron_oplog)
