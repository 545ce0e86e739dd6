# Gloo backend: optional. Built when Gloo's CMake package is found (Debian: libgloo-dev);
# without it the backend is absent and runs without mpirun re-execute under the MPI launcher.
option(COMMBENCH_GLOO "Build the Gloo backend when Gloo is found" ON)
set(COMMBENCH_HAVE_GLOO OFF CACHE INTERNAL "Gloo backend built")
if(COMMBENCH_GLOO)
  find_package(Gloo CONFIG QUIET)
endif()
if(COMMBENCH_GLOO AND Gloo_FOUND AND TARGET gloo)
  set(COMMBENCH_HAVE_GLOO ON CACHE INTERNAL "Gloo backend built")
  # The library's own version is a fixed 0.5.0; the package version names the snapshot
  # ("0.0~git20220518.5b14351-3" on Debian bookworm), so prefer it when dpkg knows the file.
  set(_gloo_version "${GLOO_VERSION}")
  get_target_property(_gloo_lib gloo IMPORTED_LOCATION_RELWITHDEBINFO)
  if(NOT _gloo_lib)
    get_target_property(_gloo_lib gloo IMPORTED_LOCATION)
  endif()
  find_program(_dpkg dpkg)
  find_program(_dpkg_query dpkg-query)
  if(_gloo_lib AND _dpkg AND _dpkg_query)
    get_filename_component(_gloo_real "${_gloo_lib}" REALPATH)
    execute_process(COMMAND ${_dpkg} -S "${_gloo_real}" OUTPUT_VARIABLE _gloo_owner
                    ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    string(REGEX REPLACE ":.*" "" _gloo_pkg "${_gloo_owner}")
    if(_gloo_pkg)
      execute_process(COMMAND ${_dpkg_query} -W -f=\${Version} "${_gloo_pkg}"
                      OUTPUT_VARIABLE _gloo_pkg_version ERROR_QUIET
                      OUTPUT_STRIP_TRAILING_WHITESPACE)
      # Drop the Debian revision: 0.0~git20220518.5b14351-3 -> 0.0~git20220518.5b14351
      string(REGEX REPLACE "-[^-]+$" "" _gloo_pkg_version "${_gloo_pkg_version}")
      if(_gloo_pkg_version)
        set(_gloo_version "${_gloo_pkg_version}")
      endif()
    endif()
  endif()
  target_sources(cb_collectives PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/gloo_algorithms.cpp
    ${CMAKE_CURRENT_LIST_DIR}/gloo_backend.cpp
    ${CMAKE_CURRENT_LIST_DIR}/gloo_control.cpp
    ${CMAKE_CURRENT_LIST_DIR}/gloo_entry.cpp
    ${CMAKE_CURRENT_LIST_DIR}/gloo_errors.cpp
    ${CMAKE_CURRENT_LIST_DIR}/gloo_ops.cpp
    ${CMAKE_CURRENT_LIST_DIR}/gloo_route.cpp
    ${CMAKE_CURRENT_LIST_DIR}/gloo_store.cpp
    ${CMAKE_CURRENT_LIST_DIR}/gloo_transport.cpp
  )
  target_link_libraries(cb_collectives PUBLIC gloo)
  target_compile_definitions(cb_collectives PRIVATE COMMBENCH_HAVE_GLOO=1)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/gloo_backend.cpp PROPERTIES
    COMPILE_DEFINITIONS "COMMBENCH_GLOO_VERSION=\"${_gloo_version}\"")
  message(STATUS "commbench: Gloo backend ON (Gloo ${_gloo_version})")
else()
  message(STATUS "commbench: Gloo backend OFF (Gloo not found)")
endif()
