# Run by `cmake --install` (ops/install.cmake) with CMAKE_INSTALL_PREFIX the prefix of this
# install: writes the files whose text names installed paths. ops/systemd and ops/cron name
# the /usr/local layout; each "/usr/local/" becomes "PREFIX/" here, so one set of sources
# serves a /usr/local install by hand and the Debian package (/usr).
set(prefix "${CMAKE_INSTALL_PREFIX}")
set(src "${CLICKATRON_SOURCE_DIR}")
set(unit_dir "${CLICKATRON_SYSTEMD_UNIT_DIR}")
if(unit_dir STREQUAL "")
  set(unit_dir "${prefix}/lib/systemd/system")
endif()

# Writes DESTDIR/dest with the text of source, /usr/local/ made prefix/.
function(clickatron_install_rewritten source dest mode)
  file(READ "${source}" text)
  string(REPLACE "/usr/local/" "${prefix}/" text "${text}")
  get_filename_component(dir "$ENV{DESTDIR}${dest}" DIRECTORY)
  file(MAKE_DIRECTORY "${dir}")
  message(STATUS "Installing: $ENV{DESTDIR}${dest}")
  file(WRITE "$ENV{DESTDIR}${dest}" "${text}")
  file(CHMOD "$ENV{DESTDIR}${dest}" FILE_PERMISSIONS ${mode})
endfunction()

file(GLOB units "${src}/ops/systemd/*.service" "${src}/ops/systemd/*.timer" "${src}/ops/systemd/*.target")
foreach(unit ${units})
  get_filename_component(name "${unit}" NAME)
  clickatron_install_rewritten("${unit}" "${unit_dir}/${name}" "OWNER_READ;OWNER_WRITE;GROUP_READ;WORLD_READ")
endforeach()
clickatron_install_rewritten("${src}/ops/cron/crontab" "${prefix}/share/doc/clickatron/examples/crontab"
                             "OWNER_READ;OWNER_WRITE;GROUP_READ;WORLD_READ")

# The example configs of a one-host cluster, where the units read them; an existing file is
# the operator's and stays as it is.
foreach(pair "cluster.conf.example:cluster.conf" "realtime.env.example:realtime-0.env"
             "archive.env.example:archive-0.env")
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 from)
  list(GET pair 1 to)
  if(EXISTS "$ENV{DESTDIR}/etc/clickatron/${to}")
    message(STATUS "Keeping: $ENV{DESTDIR}/etc/clickatron/${to}")
  else()
    clickatron_install_rewritten("${src}/ops/systemd/${from}" "/etc/clickatron/${to}"
                                 "OWNER_READ;OWNER_WRITE;GROUP_READ;WORLD_READ")
  endif()
endforeach()
