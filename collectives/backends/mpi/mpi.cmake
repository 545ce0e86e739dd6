# MPI backend: always built (MPI is also the control channel of ranks started by an MPI launcher).
target_sources(cb_collectives PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/flavor_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mpi_algorithm_select.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mpi_algorithm_table.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mpi_backend.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mpi_entry.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mpi_control.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mpi_runtime.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mpi_tuning.cpp
)
target_link_libraries(cb_collectives PUBLIC MPI::MPI_C)
# The deprecated MPI C++ bindings are never used.
target_compile_definitions(cb_collectives PUBLIC OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
