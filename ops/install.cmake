# What `cmake --install BUILD [--prefix P]` puts where — the layout of an installed host
# (docs/operations.md#layout-of-a-production-host) and of the Debian package ops/package
# builds from these same rules (docs/operations.md#the-debian-package):
#
#   P/bin/clickatron-{api,realtime,archive,rebuild,key,oplog}
#   P/lib/clickatron/clickatron-nightly           the nightly job (ops/cron)
#   P/share/clickatron/ui/                        the dashboard (clickatron-api's default ui-dir)
#   P/share/doc/clickatron/*.md, examples/        the docs; crontab and prometheus examples
#   UNITDIR/clickatron-*.service, .timer, .target the units of ops/systemd, their /usr/local
#                                                 paths made P's
#   /etc/clickatron/{cluster.conf,realtime-0.env,archive-0.env}
#                                                 example configs, never over an existing file
#
# UNITDIR is CLICKATRON_SYSTEMD_UNIT_DIR, default P/lib/systemd/system (/usr/local/lib/systemd/system
# is on systemd's search path; Debian 12's packages use /lib/systemd/system).
set(CLICKATRON_SYSTEMD_UNIT_DIR "" CACHE STRING
    "Where cmake --install puts the systemd units (default: PREFIX/lib/systemd/system)")

set(clickatron_programs clickatron-api clickatron-realtime clickatron-archive clickatron-rebuild clickatron-key
    clickatron-oplog)
foreach(program ${clickatron_programs})
  if(TARGET ${program})
    install(TARGETS ${program} RUNTIME DESTINATION bin)
  endif()
endforeach()
install(PROGRAMS ${CMAKE_SOURCE_DIR}/ops/cron/clickatron-nightly DESTINATION lib/clickatron)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/ui/ DESTINATION share/clickatron/ui)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION share/doc/clickatron FILES_MATCHING PATTERN "*.md"
        PATTERN img EXCLUDE)
install(FILES ${CMAKE_SOURCE_DIR}/ops/prometheus/prometheus.yml ${CMAKE_SOURCE_DIR}/ops/prometheus/clickatron.rules.yml
        DESTINATION share/doc/clickatron/examples/prometheus)
# The files whose paths depend on the prefix given at install time (cmake --install --prefix),
# written by a script run then: the units, the crontab example and the configs under /etc.
install(CODE "set(CLICKATRON_SOURCE_DIR \"${CMAKE_SOURCE_DIR}\")
set(CLICKATRON_SYSTEMD_UNIT_DIR \"${CLICKATRON_SYSTEMD_UNIT_DIR}\")")
install(SCRIPT ${CMAKE_SOURCE_DIR}/ops/install-system.cmake)
