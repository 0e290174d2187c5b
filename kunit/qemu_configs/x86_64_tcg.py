# kunit.py qemu_config: x86_64 as tools/testing/kunit/qemu_configs/x86_64.py,
# run under TCG. kunit.py starts QEMU with "-accel kvm -accel hvf -accel
# tcg"; QEMU takes the first that works, and an x86_64 guest under the
# nested KVM of the machines here printed nothing. qemu_arch names the
# wrapper kunit/bin/qemu-system-x86_64-tcg, which drops the other
# accelerators (kmt puts kunit/bin first in PATH).
#
# tools/testing/kunit/kunit.py run --arch=x86_64 \
#     --qemu_config=<this file> ... (with kunit/bin in PATH)
from ..qemu_config import QemuArchParams

QEMU_ARCH = QemuArchParams(linux_arch='x86_64',
			   kconfig='''
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y''',
			   qemu_arch='x86_64-tcg',
			   kernel_path='arch/x86/boot/bzImage',
			   kernel_command_line='console=ttyS0',
			   extra_qemu_params=['-bios', 'qboot.rom'])
