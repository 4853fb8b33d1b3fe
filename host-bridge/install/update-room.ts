// An update starts only when the disk has room for its copy of data/. The copy (copy-app-data.ts)
// first copies each database with its log into a folder only the bridge writes, then writes the
// backup beside it, and keeps those snapshots until the whole tree is copied: at its peak it
// holds about twice data/ on the disk of the apps folder. Run out of disk in the middle, the
// update rolls back having stopped the app's backend for nothing, so the room is measured before
// the old backend stops (statfs, and data/'s allocated blocks) and an update without it is
// refused before anything changed.
import { folderBytes } from "../sandbox/storage-limit";
import { availableBytes, RELEASE_BELOW_BYTES } from "../storage-reserve";

/** Kept free beyond the copy: the room below which the gateway releases its reserve for its own state. */
export const UPDATE_ROOM_MARGIN_BYTES = RELEASE_BELOW_BYTES;

export interface UpdateRoom {
  /** data/'s allocated bytes. */
  dataBytes: number;
  /** What the update needs free: twice data/, plus the margin. */
  neededBytes: number;
  /** What the disk holding the apps folder has free for the bridge. */
  freeBytes: number;
}

/** The room an update of the app whose data is at `dataDir` needs, and what the disk of `appsDir` has. */
export async function updateRoom(dataDir: string, appsDir: string): Promise<UpdateRoom> {
  const dataBytes = await folderBytes(dataDir);
  return {
    dataBytes,
    neededBytes: 2 * dataBytes + UPDATE_ROOM_MARGIN_BYTES,
    freeBytes: await availableBytes(appsDir),
  };
}

/** A byte count as the owner reads it: MiB with one decimal. */
export function mebibytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
