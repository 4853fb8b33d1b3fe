// Bounds of what one app can make AppRegistry store for another (issue 11 item 4): a sender
// must not be able to fill the gateway's storage through a receiving app's inbox.

/** Each receiving app's inbox quota: waiting messages and their bytes, and one message's size (as JSON). */
export const INBOX_LIMITS = { messages: 1000, bytes: 4 * 1024 * 1024, messageBytes: 64 * 1024 } as const;
