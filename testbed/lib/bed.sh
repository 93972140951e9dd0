# panverbs test bed: shared host-side functions (sourced by testbed/run and testbed/test).
# Requirements checks, package installation, and the cached kernel + initramfs.

: "${HOME:=$(getent passwd "$(id -u)" | cut -d: -f6)}"
export HOME
BED_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BED_REPO=$(cd "$BED_DIR/.." && pwd)
BED_CACHE=${PANVERBS_TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/panverbs-testbed}
# panverbs_find_jdk and panverbs_maven_opts: the JDK policy every script shares
. "$BED_DIR/lib/jdk.sh"

# Debian packages the bed needs on the host (the guest runs the host's binaries over 9p).
BED_PACKAGES=(qemu-system-x86 busybox-static cpio kmod iproute2 rdma-core ibverbs-providers ibverbs-utils
              libibverbs-dev librdmacm-dev perftest rdmacm-utils)

# Kernel modules /init loads, in dependency order once resolved against modules.dep. crc32_generic
# provides the crc32 shash rxe needs ("rdma link add" fails without it).
BED_MODULES=(virtio_pci 9pnet_virtio 9p overlay dummy virtio_net crc32_generic ib_core ib_uverbs rdma_ucm rdma_rxe)

bed_err() { echo "testbed: $*" >&2; }
bed_die() { echo "testbed: ERROR: $*" >&2; exit 2; }
bed_info() { [[ ${BED_QUIET:-0} == 1 ]] || echo "testbed: $*" >&2; }

bed_missing_packages() {
    local p installed
    installed=" $(dpkg-query -W -f='${db:Status-Abbrev}${Package} ' "${BED_PACKAGES[@]}" 2>/dev/null) "
    for p in "${BED_PACKAGES[@]}"; do
        [[ $installed == *" ii $p "* ]] || echo -n "$p "
    done
}

# Installs the missing Debian packages when root; otherwise names them and fails.
bed_ensure_packages() {
    command -v dpkg-query >/dev/null ||
        bed_die "this host has no dpkg: install qemu-system-x86_64, a static busybox, cpio, kmod, iproute2, rdma-core, libibverbs, perftest by hand"
    local missing
    missing=$(bed_missing_packages)
    [[ -z $missing ]] && return 0
    if [[ $(id -u) != 0 ]]; then
        bed_die "missing Debian packages: $missing; install them: sudo apt-get install -y $missing"
    fi
    bed_info "installing $missing"
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck disable=SC2086
    if ! apt-get install -y -q --no-install-recommends $missing >&2; then
        apt-get update -q >&2 || bed_die "apt-get update failed"
        # shellcheck disable=SC2086
        apt-get install -y -q --no-install-recommends $missing >&2 || bed_die "apt-get install $missing failed"
    fi
}

# "PACKAGE VERSION" of the kernel linux-image-amd64 currently depends on (Debian replaces kernel ABIs, so
# never pin one). apt-cache takes seconds without a pkgcache.bin: the answer is kept in the cache until the
# apt lists change.
bed_kernel_package() {
    local stamp line
    stamp=$(stat -c %Y /var/lib/apt/lists 2>/dev/null)
    if [[ -n $stamp && -f $BED_CACHE/resolved ]]; then
        read -r line < "$BED_CACHE/resolved"
        [[ ${line%% *} == "$stamp" ]] && { echo "${line#* }"; return 0; }
    fi
    line=$(apt-cache show --no-all-versions linux-image-amd64 2>/dev/null |
        sed -n 's/^Depends:.*\(linux-image-[0-9][^ ,]*\) (= \([^)]*\)).*/\1 \2/p' | head -n 1)
    [[ -n $line ]] || return 0
    [[ -n $stamp ]] && echo "$stamp $line" > "$BED_CACHE/resolved.$$" && mv "$BED_CACHE/resolved.$$" "$BED_CACHE/resolved"
    echo "$line"
}

# Sets BED_KERNEL and BED_INITRD, downloading and unpacking the kernel package and building the
# initramfs into the cache on first use (keyed by kernel package version and the init script + modules).
bed_prepare() {
    mkdir -p "$BED_CACHE" || bed_die "cannot create the cache $BED_CACHE"
    local pkg ver key dir
    read -r pkg ver <<<"$(bed_kernel_package)"
    if [[ -z $pkg && $(id -u) == 0 ]]; then
        apt-get update -q >&2 || bed_die "apt-get update failed"
        read -r pkg ver <<<"$(bed_kernel_package)"
    fi
    if [[ -n $pkg ]]; then
        dir="$BED_CACHE/${pkg#linux-image-}_$ver"
    else
        # no apt lists (offline, not root): the newest kernel already in the cache
        dir=$(ls -1d "$BED_CACHE"/*_* 2>/dev/null | sort -V | tail -n 1)
        [[ -n $dir ]] || bed_die "cannot resolve linux-image-amd64's kernel package (run 'apt-get update' as root) and nothing is cached in $BED_CACHE"
    fi
    key=$( { cat "$BED_DIR/guest/init"; echo "${BED_MODULES[*]}"; } | sha256sum | cut -c1-12)
    BED_KERNEL="$dir/vmlinuz"
    BED_INITRD="$dir/initramfs-$key.cpio.gz"
    [[ -s $BED_KERNEL && -s $BED_INITRD ]] && return 0
    (
        # one builder at a time; others wait and then find it built
        flock -w 900 9 || bed_die "timed out waiting for the cache lock $BED_CACHE/.lock"
        [[ -s $BED_KERNEL && -s $BED_INITRD ]] && exit 0
        bed_build "$pkg" "$dir" "$key"
    ) 9>"$BED_CACHE/.lock"
    local rc=$?
    if ((rc == 3)) && [[ $(id -u) == 0 && -z ${BED_UPDATED:-} ]]; then
        # stale apt lists name a kernel the mirror no longer has: refresh them and resolve again
        BED_UPDATED=1
        apt-get update -q >&2 || bed_die "apt-get update failed"
        bed_prepare
        return
    fi
    ((rc == 0)) || exit "$rc"
}

bed_build() {
    local pkg=$1 dir=$2 key=$3 deb kver tmp
    # (runs in a subshell of bed_prepare: the EXIT trap cleans the build directory)
    mkdir -p "$dir"
    deb=$(ls -1 "$dir"/*.deb 2>/dev/null | head -n 1)
    if [[ -z $deb ]]; then
        [[ -n $pkg ]] || bed_die "no kernel package cached in $dir and none resolvable"
        bed_info "downloading $pkg (once; cached in $dir)"
        local log
        log=$(cd "$dir" && apt-get download -q "$pkg" 2>&1 | grep -v "couldn't be accessed by user '_apt'")
        [[ ${BED_QUIET:-0} == 1 ]] || echo "$log" >&2
        deb=$(ls -1 "$dir"/*.deb 2>/dev/null | head -n 1)
        if [[ -z $deb ]]; then
            rmdir "$dir" 2>/dev/null
            bed_err "ERROR: apt-get download $pkg failed (stale apt lists? run apt-get update as root): $log"
            exit 3
        fi
    fi
    tmp=$(mktemp -d "$dir/build.XXXXXX")
    BED_BUILD_TMP=$tmp
    trap 'rm -rf "$BED_BUILD_TMP"' EXIT
    bed_info "unpacking $(basename "$deb") and building the initramfs"
    dpkg-deb -x "$deb" "$tmp/x" || bed_die "dpkg-deb -x $deb failed"
    kver=$(ls -1 "$tmp/x/lib/modules" | head -n 1)
    [[ -n $kver && -f $tmp/x/boot/vmlinuz-$kver ]] || bed_die "$deb holds no kernel"
    depmod -b "$tmp/x" "$kver" || bed_die "depmod -b failed"

    local root="$tmp/root" order=() seen=" "
    mkdir -p "$root/bin" "$root/modules"
    cp /bin/busybox "$root/bin/busybox" || bed_die "no /bin/busybox (package busybox-static)"
    if ldd "$root/bin/busybox" >/dev/null 2>&1; then
        bed_die "/bin/busybox is dynamically linked; install busybox-static"
    fi
    # depth-first over modules.dep (which lists dependencies, deepest last) gives a load order
    local dep="$tmp/x/lib/modules/$kver/modules.dep"
    bed_visit() {
        local name=${1//-/_} line path d
        [[ $seen == *" $name "* ]] && return 0
        seen+="$name "
        line=$(grep -E "(^|/)(${name}|${name//_/-})\.ko(\.xz|\.zst|\.gz)?:" "$dep" | head -n 1)
        [[ -n $line ]] || bed_die "module $name not found in $kver"
        path=${line%%:*}
        local deps=(${line#*:})
        for ((d = ${#deps[@]} - 1; d >= 0; d--)); do
            bed_visit "$(basename "${deps[d]}" | sed -E 's/\.ko(\.xz|\.zst|\.gz)?$//')"
        done
        local base
        base=$(basename "$path" | sed -E 's/\.ko(\.xz|\.zst|\.gz)?$//')
        case $path in
            *.xz) xz -dc "$tmp/x/lib/modules/$kver/$path" ;;
            *.zst) zstd -qdc "$tmp/x/lib/modules/$kver/$path" ;;
            *.gz) gzip -dc "$tmp/x/lib/modules/$kver/$path" ;;
            *) cat "$tmp/x/lib/modules/$kver/$path" ;;
        esac > "$root/modules/$base.ko" || bed_die "cannot extract $path"
        order+=("$base")
    }
    local m
    for m in "${BED_MODULES[@]}"; do bed_visit "$m"; done
    printf '%s\n' "${order[@]}" > "$root/modules.order"
    cp "$BED_DIR/guest/init" "$root/init" && chmod 755 "$root/init"
    (cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$tmp/initrd" || bed_die "cpio failed"
    cp "$tmp/x/boot/vmlinuz-$kver" "$dir/vmlinuz.tmp" && mv "$dir/vmlinuz.tmp" "$dir/vmlinuz"
    mv "$tmp/initrd" "$dir/initramfs-$key.cpio.gz"
    echo "$kver" > "$dir/kernel-release"
    # older initramfs builds of this kernel, and kernels Debian has replaced, are stale; an hour's grace
    # for runs (other checkouts with another guest/init) that may be booting them right now
    find "$dir" -maxdepth 1 -name 'initramfs-*.cpio.gz' ! -name "initramfs-$key.cpio.gz" -mmin +60 -delete
    find "$BED_CACHE" -mindepth 1 -maxdepth 1 -type d -name '*_*' ! -path "$dir" -mmin +60 -exec rm -rf {} +
    bed_info "cached kernel $kver and initramfs in $dir"
}
