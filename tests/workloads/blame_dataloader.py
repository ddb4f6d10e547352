# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""blame_dataloader.py DIR: the poison-fork pattern with a real torch DataLoader. The "model"
initialises CUDA (cuInit of the CUDA test double over ctypes; LD_LIBRARY_PATH must name
build/doubles) in build_model(); iterating the DataLoader forks its workers in main(); each
worker's __getitem__ uses the inherited nvidiactl fd. The stack test checks the sites against
the BLAME-* lines."""
import ctypes
import fcntl
import time

import torch
from gpufd import CHECK_VERSION, ctl_fd
from torch.utils.data import DataLoader, Dataset


class Frames(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        try:
            fcntl.ioctl(ctl_fd(), CHECK_VERSION, bytearray(72))  # BLAME-USE
        except OSError:
            pass
        return torch.tensor([i])


def build_model():
    cuda = ctypes.CDLL("libcuda.so.1")
    assert cuda.cuInit(0) == 0  # BLAME-INIT
    return cuda


def main():
    build_model()
    loader = DataLoader(Frames(), batch_size=2, num_workers=2,
                        multiprocessing_context="fork")
    total = 0
    for batch in loader:  # BLAME-FORK
        total += int(batch.sum())
    assert total == 6, total
    # a job goes on training: the collector resolves its stacks meanwhile (the lines of
    # torch's long functions are read from this process's memory)
    time.sleep(2)


if __name__ == "__main__":
    main()
