# The grader's static checks (grader/static_checks_*.cpp) on the hostile submissions, the
# references, the stubs and the faulty submissions: host only, no GPU needed. Included from
# tests/CMakeLists.txt outside WORKBOOK_CHAPTERS_ONLY.
#
# cuobjdump is optional (then the idea notes are not tested); PyPI's nvidia-cuda-cuobjdump and
# nvidia-cuda-nvdisasm bring one: point WORKBOOK_CUOBJDUMP at it.
find_program(WORKBOOK_CUOBJDUMP cuobjdump HINTS "${CUDAToolkit_BIN_DIR}"
             DOC "cuobjdump, for the idea notes (optional)")
if(NOT WORKBOOK_CUOBJDUMP)
  set(static_checks_cuobjdump "")
else()
  set(static_checks_cuobjdump "${WORKBOOK_CUOBJDUMP}")
endif()
# nm and objdump: binutils, as CMake found them for the compilers.
if(NOT CMAKE_NM OR NOT CMAKE_OBJDUMP)
  find_program(CMAKE_NM nm REQUIRED)
  find_program(CMAKE_OBJDUMP objdump REQUIRED)
endif()

# The directories whose headers a chapter may include, joined by '|' (a list would split).
set(static_checks_roots ${CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES}
    ${CMAKE_CUDA_IMPLICIT_INCLUDE_DIRECTORIES} ${CUDAToolkit_INCLUDE_DIRS})
# NCCL's headers, where the build found them: the chapter over several GPUs includes nccl.h.
set(static_checks_nccl "")
if(WORKBOOK_HAVE_NCCL)
  get_target_property(static_checks_nccl workbook_nccl_library INTERFACE_INCLUDE_DIRECTORIES)
  list(APPEND static_checks_roots ${static_checks_nccl})
endif()
list(REMOVE_DUPLICATES static_checks_roots)
list(JOIN static_checks_roots "|" static_checks_roots)

add_executable(static_checks_test
  ${CMAKE_CURRENT_LIST_DIR}/static_checks_test.cpp
  ${PROJECT_SOURCE_DIR}/grader/static_checks_rules.cpp
  ${PROJECT_SOURCE_DIR}/grader/static_checks_includes.cpp
  ${PROJECT_SOURCE_DIR}/grader/static_checks_objects.cpp
  ${PROJECT_SOURCE_DIR}/grader/process.cpp
  ${PROJECT_SOURCE_DIR}/grader/text.cpp)
target_include_directories(static_checks_test PRIVATE ${PROJECT_SOURCE_DIR}/grader)
target_link_libraries(static_checks_test PRIVATE GTest::gtest_main workbook_judge_host workbook_runner_host)
target_compile_definitions(static_checks_test PRIVATE
  WORKBOOK_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
  WORKBOOK_NVCC="${CMAKE_CUDA_COMPILER}"
  WORKBOOK_NM="${CMAKE_NM}"
  WORKBOOK_OBJDUMP="${CMAKE_OBJDUMP}"
  WORKBOOK_CUOBJDUMP="${static_checks_cuobjdump}"
  WORKBOOK_INCLUDE_ROOTS="${static_checks_roots}"
  WORKBOOK_NCCL_INCLUDE_DIR="${static_checks_nccl}")
add_test(NAME grader.static_checks COMMAND static_checks_test)
# About 40 nvcc runs, two at a time on two cores.
set_tests_properties(grader.static_checks PROPERTIES TIMEOUT 900)
