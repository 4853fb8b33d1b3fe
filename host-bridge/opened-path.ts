// What a descriptor really is: the kernel's own path for the file open on it (/proc/self/fd).
// A path checked name by name can be swapped under a reader (a folder on the way replaced by a
// link); the file already open is what is read, and this names it.
import { readlinkSync } from "node:fs";

/** The path of the file open on `fd`, as the kernel resolved it; null when it cannot say. */
export function openedPath(fd: number): string | null {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return null;
  }
}
