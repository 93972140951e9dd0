# panverbs: the one JDK finder of every script (sourced by tools/bin/panverbs and its ib_*/pingpong symlinks,
# perf/run and testbed/lib/bed.sh), so they all agree on which JDK runs:
#
#   1. $JAVA_HOME, when it is a JDK 22 or newer;
#   2. else the newest JDK 22+ under /usr/lib/jvm (a note on stderr says why $JAVA_HOME, if set, was passed over);
#   3. else an error naming what was found.
#
# A JDK is a directory with bin/java and bin/javac (the scripts build with Maven when jars are missing); its
# version comes from its release file, else from the java binary itself. The default `java` on PATH is never
# consulted: on Debian 12 it is 17. test-support's JdkFinderTest pins this policy.

# The major version of the JDK at $1 (JAVA_VERSION="25.0.1" -> 25, "1.8.0_392" -> 8), or 0.
panverbs_jdk_major() {
    local v
    # (|| true: callers may run under set -e -o pipefail, and a missing release file is not an error)
    v=$(sed -n 's/^JAVA_VERSION="\([0-9._]*\).*/\1/p' "$1/release" 2>/dev/null | head -n 1) || true
    if [[ -z $v && -x $1/bin/java ]]; then
        v=$("$1/bin/java" -XshowSettings:properties -version 2>&1 |
            awk -F' = ' '/java.specification.version/ { print $2; exit }') || true
    fi
    [[ $v == 1.* ]] && v=${v#1.}
    v=${v%%[._]*}
    [[ $v =~ ^[0-9]+$ ]] && echo "$v" || echo 0
}

# Exports JAVA_HOME (and puts its bin/ first on PATH). Without a JDK 22+ it returns 1 and leaves the reason in
# PANVERBS_JDK_ERROR for the caller to print under its own name.
#
#   panverbs_find_jdk [JVM_DIR]      JVM_DIR: where JDKs are installed (default /usr/lib/jvm)
panverbs_find_jdk() {
    local root=${1:-/usr/lib/jvm} dir v best="" best_major=0 found="" java_home_note=""
    PANVERBS_JDK_ERROR=""
    if [[ -n ${JAVA_HOME:-} ]]; then
        v=$(panverbs_jdk_major "$JAVA_HOME")
        if ((v >= 22)) && [[ -x $JAVA_HOME/bin/java && -x $JAVA_HOME/bin/javac ]]; then
            export JAVA_HOME PATH="$JAVA_HOME/bin:$PATH"
            return 0
        fi
        if [[ ! -x $JAVA_HOME/bin/java ]]; then
            java_home_note="JAVA_HOME=$JAVA_HOME has no bin/java"
        elif [[ ! -x $JAVA_HOME/bin/javac ]]; then
            java_home_note="JAVA_HOME=$JAVA_HOME is not a JDK (no bin/javac)"
        else
            java_home_note="JAVA_HOME=$JAVA_HOME is Java $v, older than 22"
        fi
    fi
    for dir in "$root"/*/; do
        dir=${dir%/}
        [[ -x $dir/bin/java && -x $dir/bin/javac ]] || continue
        v=$(panverbs_jdk_major "$dir")
        found+="${found:+, }${dir##*/} ($v)"
        if ((v >= 22 && v > best_major)); then best=$dir best_major=$v; fi
    done
    if [[ -z $best ]]; then
        PANVERBS_JDK_ERROR="no JDK 22 or newer: ${java_home_note:-JAVA_HOME is unset}, and $root holds ${found:-no JDK}; install a JDK 22+ (e.g. Temurin 25, https://adoptium.net) and set JAVA_HOME to it"
        return 1
    fi
    [[ -n $java_home_note ]] && echo "panverbs: $java_home_note; using $best (Java $best_major)" >&2
    export JAVA_HOME=$best PATH="$best/bin:$PATH"
    return 0
}

# Quiets Maven on JDK 24+, which warns about Maven's own sun.misc.Unsafe use (guava) on every run; JDK 22 and
# 23 reject the flag. Call after panverbs_find_jdk.
panverbs_maven_opts() {
    if (($(panverbs_jdk_major "$JAVA_HOME") >= 24)) && [[ ${MAVEN_OPTS:-} != *--sun-misc-unsafe-memory-access* ]]; then
        export MAVEN_OPTS="${MAVEN_OPTS:-}${MAVEN_OPTS:+ }--sun-misc-unsafe-memory-access=allow"
    fi
}
