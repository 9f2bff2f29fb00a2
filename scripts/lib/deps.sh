# Sourced by scripts: install what building and running gomoku-zero needs.
# gz_install_deps [extra Debian packages...]: installs the missing ones
# with apt-get (sudo when not root), and puts nvcc on PATH when the CUDA
# toolkit is there.
gz_install_deps() {
    local need=()
    command -v meson >/dev/null || need+=(meson)
    command -v ninja >/dev/null || need+=(ninja-build)
    command -v pkg-config >/dev/null || need+=(pkg-config)
    command -v gcc >/dev/null || need+=(gcc)
    local pkg
    # libmicrohttpd-dev: gomoku serve; chromium + chromium-driver: its browser test;
    # redis-server + libhiredis-dev: the broker for remote workers and its tests
    for pkg in check zlib1g-dev libopenblas-dev libmicrohttpd-dev chromium chromium-driver \
        redis-server libhiredis-dev "$@"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
    done
    if [ ${#need[@]} -gt 0 ]; then
        echo "installing ${need[*]}" >&2
        local sudo=
        [ "$(id -u)" -ne 0 ] && sudo=sudo
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
    fi
    if [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
}

# gz_build DIR: configure (once) and compile the program into DIR.
gz_build() {
    local dir=$1
    if [ -f "$dir/build.ninja" ]; then
        meson setup --reconfigure "$dir" >/dev/null
    else
        meson setup "$dir" >/dev/null
    fi
    ninja -C "$dir" -j "$(nproc)" prog >/dev/null   # the program and its CUDA module
}
