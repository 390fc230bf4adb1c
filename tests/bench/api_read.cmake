# clickatron-api read path (issue 7): no compiled program — the load benchmark is the script
# tests/bench/api_read_load.sh (data from api_read_gen.py, wrk + api_read_wrk.lua, with nginx
# and the archive's own /get measured in the same run). Results: docs/benchmarks.md.
