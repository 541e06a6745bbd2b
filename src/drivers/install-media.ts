// The install media of a Windows VM a driver creates: the files render/
// renders (Autounattend.xml, the first-boot script and the command Setup
// runs at its end), by their path on the media's root. Windows Setup reads
// Autounattend.xml from the root of any removable drive (Microsoft Learn,
// "Windows Setup Automation Overview": implicit answer file search); the
// answer file copies the kubemix/ folder from the media. The driver says on
// which host and in which folder it builds the media (Driver.installMedia).

export const INSTALL_MEDIA_FILES = {
  answerFile: 'Autounattend.xml',
  setupScript: 'kubemix/kubemix-setup.ps1',
  setupComplete: 'kubemix/SetupComplete.cmd',
} as const;

/** Where a driver gathers a VM's media files before it builds the media. */
export interface InstallMediaPlace {
  readonly host: string;
  readonly dir: string;
}
