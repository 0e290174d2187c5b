# kunit.py qemu_config: arm64 with MTE, for the HW_TAGS KASAN suite and
# the arm64_mte suite. tools/testing/kunit/qemu_configs/arm64.py boots
# "-machine virt -cpu max,pauth-impdef=on", without MTE; this one adds
# mte=on to the machine. It needs QEMU 10 (QEMU 7.2, Debian 12's own,
# reports KASAN bugs that are not there with MTE), and TCG (the wrapper
# kunit/bin/qemu-system-aarch64-tcg).
#
# tools/testing/kunit/kunit.py run --arch=arm64 \
#     --cross_compile=aarch64-linux-gnu- --qemu_config=<this file> ...
from ..qemu_config import QemuArchParams

QEMU_ARCH = QemuArchParams(linux_arch='arm64',
			   kconfig='''
CONFIG_SERIAL_AMBA_PL010=y
CONFIG_SERIAL_AMBA_PL010_CONSOLE=y
CONFIG_SERIAL_AMBA_PL011=y
CONFIG_SERIAL_AMBA_PL011_CONSOLE=y
CONFIG_ARM64_MTE=y''',
			   qemu_arch='aarch64-tcg',
			   kernel_path='arch/arm64/boot/Image.gz',
			   kernel_command_line='console=ttyAMA0',
			   extra_qemu_params=['-machine', 'virt,mte=on', '-cpu', 'max,pauth-impdef=on'])
