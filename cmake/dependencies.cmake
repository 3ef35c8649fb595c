# The libraries the project links: the installed package first (find_package), and where the machine
# lacks one, its source at a pinned release, fetched and built with the project (FetchContent's
# FIND_PACKAGE_ARGS, CMake 3.24+). A machine without network needs the packages installed
# (grader/grade --check-setup says which and how); WORKBOOK_FETCH_MISSING=OFF makes a missing one
# an error at once instead of a download.
include(FetchContent)
option(WORKBOOK_FETCH_MISSING "Fetch a library this machine lacks (needs network) instead of failing" ON)

# workbook_dependency(<name> <package> <target> <git repository> <tag> <how to install it>
#                     [find_package arguments...])
function(workbook_dependency name package target repository tag install)
  if(NOT WORKBOOK_FETCH_MISSING)
    find_package(${package} ${ARGN})
    if(NOT TARGET ${target})
      message(FATAL_ERROR "${package} (${target}) is not installed here: ${install}")
    endif()
    return()
  endif()
  FetchContent_Declare(${name} GIT_REPOSITORY ${repository} GIT_TAG ${tag} GIT_SHALLOW TRUE
                       FIND_PACKAGE_ARGS NAMES ${package} ${ARGN})
  FetchContent_MakeAvailable(${name})
  FetchContent_GetProperties(${name} SOURCE_DIR source)  # empty where find_package found it
  if(source)
    message(STATUS "${package}: not installed here (${install}); built from ${repository} at ${tag}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "${package} (${target}) is not installed here: ${install}")
  endif()
endfunction()

set(INSTALL_GTEST OFF CACHE BOOL "")
set(BUILD_GMOCK OFF CACHE BOOL "")
workbook_dependency(googletest GTest GTest::gtest_main https://github.com/google/googletest.git v1.14.0
                    "Debian/Ubuntu: apt-get install libgtest-dev")
set(FMT_INSTALL OFF CACHE BOOL "")
workbook_dependency(fmt fmt fmt::fmt https://github.com/fmtlib/fmt.git 10.2.1 "Debian/Ubuntu: apt-get install libfmt-dev")
set(JSON_Install OFF CACHE BOOL "")
workbook_dependency(nlohmann_json nlohmann_json nlohmann_json::nlohmann_json https://github.com/nlohmann/json.git v3.11.3
                    "Debian/Ubuntu: apt-get install nlohmann-json3-dev" 3)
set(CLI11_INSTALL OFF CACHE BOOL "")
workbook_dependency(cli11 CLI11 CLI11::CLI11 https://github.com/CLIUtils/CLI11.git v2.4.2
                    "Debian/Ubuntu: apt-get install libcli11-dev" CONFIG)
