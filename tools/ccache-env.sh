# ccache's settings for every build folder, sourced by tools/build.sh,
# tools/sanitize.sh and tools/bench/run.sh with the repository as $1.
# CCACHE_NOHASHDIR and CCACHE_BASEDIR: a clone in another folder (CI's fresh
# clone) hits the cache too; debug information may then name the folder the
# object was first built in. pch_defines and include_file_*: the transpiler's
# precompiled header is made in the same build, just before the files that
# use it.
export CCACHE_SLOPPINESS=time_macros,pch_defines,include_file_mtime,include_file_ctime
export CCACHE_BASEDIR="$1" CCACHE_NOHASHDIR=true
