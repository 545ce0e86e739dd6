# Default CUDA architectures: real code for every GPU generation from Turing on that the toolkit
# can build (sm_75 Turing, 80 A100, 86 Ampere workstation, 89 Ada, 90 Hopper, 100 Blackwell
# B200/GB200, 120 Blackwell workstation), plus PTX of the newest, which the driver compiles for
# GPUs newer still. Asked of nvcc --list-gpu-arch (CUDA 12.0 builds 75..90, CUDA 13 adds 100 and
# 120 and drops nothing older than 75). Any -DCMAKE_CUDA_ARCHITECTURES=... replaces the list.
function(commbench_cuda_architectures out)
  set(_wanted 75 80 86 89 90 100 120)
  execute_process(COMMAND "${CMAKE_CUDA_COMPILER}" --list-gpu-arch
                  OUTPUT_VARIABLE _listed ERROR_QUIET RESULT_VARIABLE _rc)
  set(_have "")
  if(_rc EQUAL 0)
    string(REGEX MATCHALL "compute_[0-9]+" _listed "${_listed}")
    foreach(_a IN LISTS _wanted)
      if("compute_${_a}" IN_LIST _listed)
        list(APPEND _have ${_a})
      endif()
    endforeach()
  endif()
  if(NOT _have)
    set(_have 80 90)  # an nvcc that cannot list them: what every CUDA 12 builds
  endif()
  list(POP_BACK _have _newest)
  list(TRANSFORM _have APPEND "-real")
  list(APPEND _have ${_newest})  # real code and PTX
  set(${out} ${_have} PARENT_SCOPE)
endfunction()
